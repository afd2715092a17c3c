package console

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/accelstack/accelstack/pkg/jobs/kinds"
)

// consoleKind is an entry of web/kinds.json.
type consoleKind struct {
	Key      string      `json:"key"`
	Kind     string      `json:"kind"`
	Group    string      `json:"group"`
	Version  string      `json:"version"`
	Resource string      `json:"resource"`
	Of       []string    `json:"of"`
	Columns  [][2]string `json:"columns"`
	Job      bool        `json:"job"`
}

func readKinds(t *testing.T) map[string]consoleKind {
	t.Helper()
	b, err := os.ReadFile("web/kinds.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Kinds []consoleKind }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]consoleKind{}
	for _, k := range doc.Kinds {
		if _, dup := out[k.Key]; dup {
			t.Errorf("kinds.json names %s twice", k.Key)
		}
		out[k.Key] = k
	}
	return out
}

// TestJobKinds: the Job page lists every T9k Job kind the platform
// registers, as its API serves it.
func TestJobKinds(t *testing.T) {
	ks := readKinds(t)
	var want []string
	for _, info := range kinds.Registered() {
		if info.GVK.Group != "batch.tensorstack.dev" {
			continue
		}
		want = append(want, info.Resource)
		k, ok := ks[info.Resource]
		if !ok {
			t.Errorf("kinds.json lacks the job kind %s", info.GVK.Kind)
			continue
		}
		if k.Kind != info.GVK.Kind || k.Group != info.GVK.Group || k.Version != info.GVK.Version || k.Resource != info.Resource || !k.Job {
			t.Errorf("kinds.json's %s is %+v; the registry says %v %s", info.Resource, k, info.GVK, info.Resource)
		}
	}
	got := ks["jobs"].Of
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the Job page lists %v, want the registered %v", got, want)
	}
}

// TestColumns: a CRD kind's columns are its CRD's printer columns (but
// Age, which every list has), as kubectl get shows them.
func TestColumns(t *testing.T) {
	for _, k := range readKinds(t) {
		if k.Group == "" || k.Of != nil {
			continue
		}
		path := filepath.Join("..", "..", "deploy", "crds", k.Group+"_"+k.Resource+".yaml")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v", k.Key, err)
			continue
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if crd.Spec.Names.Kind != k.Kind {
			t.Errorf("%s: kind %s, the CRD's %s", k.Key, k.Kind, crd.Spec.Names.Kind)
		}
		var want [][2]string
		found := false
		for _, v := range crd.Spec.Versions {
			if v.Name != k.Version {
				continue
			}
			found = v.Served
			for _, c := range v.AdditionalPrinterColumns {
				if c.JSONPath != ".metadata.creationTimestamp" {
					want = append(want, [2]string{c.Name, c.JSONPath})
				}
			}
		}
		if !found {
			t.Errorf("%s: the CRD serves no version %s", k.Key, k.Version)
		}
		if !slices.Equal(k.Columns, want) {
			t.Errorf("%s: columns %v, want the CRD's %v", k.Key, k.Columns, want)
		}
	}
}
