package main

import (
	"os/exec"
	"strings"
	"testing"
)

// notLinked are the packages (and their subpackages) the controllers must
// not link, with why: each controller imports only the leaf contract of
// the server or binary it runs, never the server itself.
var notLinked = map[string]string{
	"github.com/accelstack/accelstack/pkg/serving/router": "the MLService controller needs only pkg/serving/routerconfig",
	"google.golang.org/grpc":                              "the StorageShim controller needs only pkg/csis3/s3volume, not the CSI driver",
}

// TestDependencyBounds checks that cmd/controllers links none of
// notLinked. The test binary links what the command does, so a new import
// that pulls one in changes it and runs the test again.
func TestDependencyBounds(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps listed %d packages, too few to be cmd/controllers'", len(deps))
	}
	for _, p := range deps {
		for bad, why := range notLinked {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				t.Errorf("cmd/controllers links %s: %s (go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/controllers names its importer)", p, why)
			}
		}
	}
}
