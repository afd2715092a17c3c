package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyBounds checks that the sidecar, which runs in every
// Notebook, TensorBoard and Explorer pod, links no Kubernetes code but
// klog: no API types (the container builder is pkg/activity/sidecar, which
// only the controllers import), no apimachinery, no client. The test
// binary links what the command does, so a new import that pulls one in
// changes it and runs the test again.
func TestDependencyBounds(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed %d packages, too few to be cmd/activity-proxy's", len(deps))
	}
	for _, p := range deps {
		kube := strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "sigs.k8s.io/")
		if kube && p != "k8s.io/klog/v2" && !strings.HasPrefix(p, "k8s.io/klog/v2/") {
			t.Errorf("cmd/activity-proxy links %s, Kubernetes code other than klog (go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/activity-proxy names its importer)", p)
		}
	}
}
