package cluster

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/accelstack/accelstack/test/harness"
)

// TestSidecarVersionsMatchDeploy checks that the csi-provisioner the tool
// cache builds for the local cluster's image is the version deploy/ runs.
func TestSidecarVersionsMatchDeploy(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	find := func(file, pattern string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(pattern).FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no match for %s", file, pattern)
		}
		return string(m[1])
	}
	built := find("Makefile", `(?m)^CSI_PROVISIONER_VERSION\s*\?=\s*(v\S+)$`)
	deployed := find("deploy/csi-s3/controller.yaml", `image:\s*registry\.k8s\.io/sig-storage/csi-provisioner:(v\S+)`)
	if built != deployed {
		t.Errorf("the Makefile builds csi-provisioner %s for the local cluster; deploy/csi-s3/controller.yaml runs %s", built, deployed)
	}
}
