package cluster

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/accelstack/accelstack/internal/images"
	"github.com/accelstack/accelstack/test/harness"
)

// TestSidecarVersionsMatchDeploy checks that the csi-provisioner and the
// Hydra the tool cache builds for the local cluster's images are the
// versions deploy/ runs.
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
	built = find("hack/tools/hydra/go.mod", `(?m)^require github\.com/ory/hydra/v2 (v\S+)$`)
	deployed = find("deploy/identity/hydra.yaml", `image:\s*docker\.io/oryd/hydra:(v\S+)`)
	if built != deployed {
		t.Errorf("make tools builds Hydra %s for the local cluster; deploy/identity/hydra.yaml runs %s", built, deployed)
	}
}

// TestLocalManifestsRunLocalImages checks that the local cluster's overlay
// replaces every image deploy/ runs with the one buildImages builds from the
// same definition, the DataCube executor's, workflow-events' and
// workflow-tools' included.
func TestLocalManifestsRunLocalImages(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	}
	read := func(file string) map[string]entry {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		var k struct {
			Images []entry `json:"images"`
		}
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		byName := map[string]entry{}
		for _, e := range k.Images {
			byName[e.Name] = e
		}
		return byName
	}
	deployed := read("deploy/kustomization.yaml")
	local := read("test/cluster/manifests/kustomization.yaml")
	for _, d := range images.Definitions {
		name := images.Registry + "/" + d.Binary
		if _, ok := deployed[name]; !ok {
			continue
		}
		if e := local[name]; e.NewName+":"+e.NewTag != Image(d.Binary) {
			t.Errorf("test/cluster/manifests runs %s as %s:%s, want the local image %s", name, e.NewName, e.NewTag, Image(d.Binary))
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "test", "cluster", "manifests", "controllers.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{
		"--datacube-executor-image=" + Image("datacube-executor"),
		"--workflow-events-image=" + Image("workflow-events"),
		"--workflow-tools-image=" + Image("workflow-tools"),
	} {
		if !strings.Contains(string(b), flag) {
			t.Errorf("test/cluster/manifests/controllers.yaml does not pass %s", flag)
		}
	}
}
