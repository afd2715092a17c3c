package images

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
	"github.com/accelstack/accelstack/pkg/eventlistener"
)

// kustomizationImage is an entry of a kustomization's images: block.
type kustomizationImage struct {
	Name    string `json:"name"`
	NewName string `json:"newName"`
	NewTag  string `json:"newTag"`
}

// TestDeployRunsTheImages checks that deploy/ runs exactly the images
// `make images` builds: every accelstack image its manifests name has an
// entry in deploy/kustomization.yaml that gives it the definitions' tag,
// and the controllers' default DataCube executor and workflow-events
// images are the images of those binaries.
func TestDeployRunsTheImages(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "deploy", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []kustomizationImage `json:"images"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, img := range k.Images {
		binary, ok := strings.CutPrefix(img.Name, Registry+"/")
		if _, err := Lookup(binary); !ok || err != nil {
			t.Errorf("deploy/kustomization.yaml lists the image %s, which make images does not build", img.Name)
		}
		if (img.NewName != "" && img.NewName != img.Name) || img.NewTag != Tag {
			t.Errorf("deploy/kustomization.yaml runs %s as %s:%s, make images builds %s", img.Name, img.NewName, img.NewTag, Ref(Registry, binary, Tag))
		}
		listed = append(listed, img.Name)
	}

	// The images the manifests name, without a tag: the kustomization's
	// entry is the one place that gives it.
	var named []string
	imageField := regexp.MustCompile(`(?m)^\s*(?:-\s+)?image:\s*(\S+)\s*$`)
	err = filepath.WalkDir(filepath.Join(root, "deploy"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" || d.Name() == "kustomization.yaml" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range imageField.FindAllStringSubmatch(string(b), -1) {
			if !strings.HasPrefix(m[1], Registry+"/") {
				continue
			}
			rel, _ := filepath.Rel(root, path)
			if strings.Contains(strings.TrimPrefix(m[1], Registry+"/"), ":") {
				t.Errorf("%s names %s with a tag; deploy/kustomization.yaml gives the tag", rel, m[1])
			}
			named = append(named, m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := setDiff("deploy/kustomization.yaml images:", listed, named); diff != "" {
		t.Errorf("%s (want the accelstack images the manifests name)", diff)
	}

	if want := Ref(Registry, "datacube-executor", Tag); executorenv.DefaultImage != want {
		t.Errorf("the controllers run DataCube transfers in %s by default, make images builds %s", executorenv.DefaultImage, want)
	}
	if want := Ref(Registry, "workflow-events", Tag); eventlistener.DefaultImage != want {
		t.Errorf("the controllers run EventListeners and WorkflowTriggers in %s by default, make images builds %s", eventlistener.DefaultImage, want)
	}
}
