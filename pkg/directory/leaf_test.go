package directory

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeaf keeps the package a leaf: nothing of Kubernetes or of the
// project, directly or through its imports. sigs.k8s.io/yaml, which reads
// the users file, is allowed: a YAML library with no Kubernetes in it,
// whose only import outside the standard library is go.yaml.in/yaml/v2.
func TestLeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if imp == "github.com/accelstack/accelstack/pkg/directory" || imp == "sigs.k8s.io/yaml" {
			continue
		}
		if strings.HasPrefix(imp, "k8s.io/") || strings.HasPrefix(imp, "sigs.k8s.io/") || strings.HasPrefix(imp, "github.com/accelstack/") {
			t.Errorf("imports %s, want no Kubernetes or accelstack package", imp)
		}
	}
}
