package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/test/harness"
)

// TestCRDsServeDescriptions installs deploy/crds the way an admin does, with
// kubectl apply --server-side, and checks that every CRD becomes Established
// and that the OpenAPI v3 schema the apiserver serves for each of its
// versions, which is what kubectl explain prints, describes every field.
func TestCRDsServeDescriptions(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t, harness.WithoutCRDs())
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(cp.Env.BinaryAssetsDirectory, "kubectl")
	crdDir := filepath.Join(root, "deploy", "crds")
	if out, err := exec.Command(kubectl, "--kubeconfig", cp.KubeconfigPath, "apply", "--server-side", "-k", crdDir).CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply --server-side -k deploy/crds: %v\n%s", err, out)
	}

	// A bound, not a target: on loaded cores, with other control planes
	// beside it, the thirty CRDs take a while to be established.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	disc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := generatedCRDs(t, crdDir)
	if len(crds) == 0 {
		t.Fatal("no CRD found in deploy/crds")
	}
	for _, crd := range crds {
		waitEstablished(ctx, t, cp.Client, crd.Name)
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			schema := servedSchema(ctx, t, disc, crd.Spec.Group, v.Name, crd.Spec.Names.Kind)
			if d, _ := schema["description"].(string); strings.TrimSpace(d) == "" {
				t.Errorf("%s %s: the kind has no description", crd.Name, v.Name)
			}
			missing := undescribed(schema, "")
			slices.Sort(missing)
			for _, path := range missing {
				t.Errorf("%s %s: field %s has no description", crd.Name, v.Name, path)
			}
		}
	}

	// kubectl explain prints a field's doc comment.
	for _, tc := range []struct{ apiVersion, field, want string }{
		{"tensorstack.dev/v1beta2", "storageshims.spec.s3.uri", "uri is the bucket and optional prefix"},
		{"tensorstack.dev/v1beta1", "storageshims.spec.secretRef", "secretRef names a Secret of type S3-cfg"},
		{"tensorstack.dev/v1beta1", "datacubes.spec.executor.options.extraArgs", "extraArgs are appended to the executor's command line"},
		{"batch.tensorstack.dev/v1beta1", "genericjobs.spec.replicaSpecs", "replicaSpecs are the replica types of the job"},
		{"scheduler.tensorstack.dev/v1beta1", "queues.spec.quota", "quota caps the sum of pod requests"},
		{"scheduler.tensorstack.dev/v1beta1", "podgroups.spec.minMember", "minMember is the number of pods"},
	} {
		out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", cp.KubeconfigPath, "explain", tc.field, "--api-version="+tc.apiVersion).CombinedOutput()
		if err != nil {
			t.Errorf("kubectl explain %s --api-version=%s: %v\n%s", tc.field, tc.apiVersion, err, out)
			continue
		}
		if got := strings.Join(strings.Fields(string(out)), " "); !strings.Contains(got, tc.want) {
			t.Errorf("kubectl explain %s --api-version=%s does not say %q:\n%s", tc.field, tc.apiVersion, tc.want, out)
		}
	}
}

// generatedCRDs decodes the CRDs in dir, skipping its kustomization.yaml.
func generatedCRDs(t *testing.T, dir string) []apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crds []apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range decodeYAML(t, f, b) {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			crds = append(crds, crd)
		}
	}
	return crds
}

// waitEstablished waits until the CRD name has the Established condition.
func waitEstablished(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, err
		}
		return slices.ContainsFunc(crd.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
			return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
		}), nil
	})
	if err != nil {
		t.Fatalf("CRD %s not Established: %v", name, err)
	}
}

// servedSchema returns the schema of kind in the OpenAPI v3 document the
// apiserver serves for group/version, waiting until it is published.
func servedSchema(ctx context.Context, t *testing.T, disc *discovery.DiscoveryClient, group, version, kind string) map[string]any {
	t.Helper()
	var schema map[string]any
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		raw, err := disc.RESTClient().Get().AbsPath("/openapi/v3/apis", group, version).Do(ctx).Raw()
		if err != nil {
			return false, nil //nolint:nilerr // not published yet: poll again
		}
		var doc struct {
			Components struct {
				Schemas map[string]map[string]any `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return false, err
		}
		for _, s := range doc.Components.Schemas {
			if hasGVK(s, group, version, kind) {
				schema = s
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("OpenAPI v3 schema of %s %s/%s: %v", kind, group, version, err)
	}
	return schema
}

// hasGVK reports whether an OpenAPI schema is the one of group/version kind.
func hasGVK(schema map[string]any, group, version, kind string) bool {
	gvks, _ := schema["x-kubernetes-group-version-kind"].([]any)
	for _, g := range gvks {
		m, _ := g.(map[string]any)
		if m["group"] == group && m["version"] == version && m["kind"] == kind {
			return true
		}
	}
	return false
}

// undescribed lists the fields below schema that have no description.
// Object metadata is left out: the apiserver describes the top-level one,
// and the embedded ones of templates carry only a few standard fields.
func undescribed(schema map[string]any, path string) []string {
	var missing []string
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		prop, _ := p.(map[string]any)
		if name == "metadata" || prop == nil {
			continue
		}
		if d, _ := prop["description"].(string); strings.TrimSpace(d) == "" {
			missing = append(missing, path+"."+name)
		}
		missing = append(missing, undescribed(prop, path+"."+name)...)
	}
	if items, ok := schema["items"].(map[string]any); ok {
		missing = append(missing, undescribed(items, path+"[]")...)
	}
	if extra, ok := schema["additionalProperties"].(map[string]any); ok {
		missing = append(missing, undescribed(extra, path+"{}")...)
	}
	return missing
}
