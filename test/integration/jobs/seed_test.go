package jobs

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// The T9k manual (seed 000) and the manifests of the four kinds taken from
// it, kept in testdata so that the tests run where the seed is not.
const (
	seedFile    = "000_0696c46cd9807c69.txt"
	seedGolden  = "testdata/seed000-jobs.txt"
	seedMarker  = "# ---- " + seedFile + " line "
	seedAPILine = "apiVersion: batch.tensorstack.dev/v1beta1"
)

var update = flag.Bool("update", false, "rewrite "+seedGolden+" from the seed")

var seedKinds = map[string]string{
	"GenericJob": "main", "PyTorchTrainingJob": "pytorch", "TensorFlowTrainingJob": "tensorflow", "XGBoostTrainingJob": "xgboost",
	"BeamJob": "submit-job", "MPIJob": "mpi-worker", "DeepSpeedJob": "worker", "ColossalAIJob": "worker",
}

// workerKinds are the kinds whose manual manifests describe their pods in
// spec.worker rather than in spec.replicaSpecs.
var workerKinds = map[string]bool{"MPIJob": true, "DeepSpeedJob": true, "ColossalAIJob": true}

// seedManifest is one manifest of the manual, as written.
type seedManifest struct {
	line int
	text string
}

// extractSeed returns every manifest of the four kinds in the manual: from
// an unindented apiVersion line followed by one of the kinds, to the next
// blank line.
func extractSeed(doc string) []seedManifest {
	lines := strings.Split(doc, "\n")
	var out []seedManifest
	for i := 0; i < len(lines); i++ {
		if lines[i] != seedAPILine || i+1 >= len(lines) {
			continue
		}
		if kind, ok := strings.CutPrefix(lines[i+1], "kind: "); !ok || seedKinds[kind] == "" {
			continue
		}
		j := i
		for j < len(lines) && strings.TrimSpace(lines[j]) != "" {
			j++
		}
		out = append(out, seedManifest{line: i + 1, text: strings.Join(lines[i:j], "\n")})
		i = j
	}
	return out
}

// seedPath finds the seed: $ACCELSTACK_SEEDS, or shared/seeds beside the
// project or its parent.
func seedPath() string {
	if d := os.Getenv("ACCELSTACK_SEEDS"); d != "" {
		return filepath.Join(d, seedFile)
	}
	root, err := harness.RepoRoot()
	if err != nil {
		return ""
	}
	for _, d := range []string{filepath.Join(root, "..", "shared", "seeds"), filepath.Join(root, "..", "..", "shared", "seeds")} {
		if _, err := os.Stat(filepath.Join(d, seedFile)); err == nil {
			return filepath.Join(d, seedFile)
		}
	}
	return ""
}

func formatGolden(ms []seedManifest) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%s%d\n%s\n", seedMarker, m.line, m.text)
	}
	return b.String()
}

func readGolden(t *testing.T) []seedManifest {
	t.Helper()
	b, err := os.ReadFile(seedGolden)
	if err != nil {
		t.Fatal(err)
	}
	var out []seedManifest
	for _, part := range strings.Split(string(b), seedMarker)[1:] {
		num, text, _ := strings.Cut(part, "\n")
		line, err := strconv.Atoi(num)
		if err != nil {
			t.Fatalf("%s: bad marker %q", seedGolden, num)
		}
		out = append(out, seedManifest{line: line, text: strings.TrimSuffix(text, "\n")})
	}
	return out
}

// TestSeedManifestsExtracted checks that testdata holds exactly the
// manifests of the four kinds the manual has (go test -update rewrites it).
// Without the seed beside the checkout (or ACCELSTACK_SEEDS) it skips:
// it checks testdata against its source, and the tests that apply the
// manifests run from testdata either way.
func TestSeedManifestsExtracted(t *testing.T) {
	path := seedPath()
	if path == "" {
		t.Skipf("seed %s not found (set ACCELSTACK_SEEDS); %s holds its manifests", seedFile, seedGolden)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := formatGolden(extractSeed(string(b)))
	if *update {
		if err := os.WriteFile(seedGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(seedGolden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the manifests of %s; run go test -run TestSeedManifestsExtracted -update", seedGolden, path)
	}
	if n := len(extractSeed(string(b))); n < 28 {
		t.Errorf("extracted %d manifests, want at least 28", n)
	}
}

var (
	seedEllipsisItem = regexp.MustCompile(`(?m)^(\s*)- \.\.\.$`)
	seedEllipsis     = regexp.MustCompile(`(?m)^\s*\.\.\.\n?`)
	seedParam        = regexp.MustCompile(`\$\(params\.([a-z_]+)\)`)
)

// fillSeed turns a manifest of the manual into one that can be applied,
// filling what the manual elides: "- ..." list items become a container of
// the kind's default name, "..." lines go, WorkflowTemplate parameters get
// values; then replica types without a template get one, containers
// without a name or an image get them, and an elided replicaSpecs (and the
// torchrun launch elastic training needs) is supplied. Nothing written is
// changed.
func fillSeed(t *testing.T, m seedManifest) *unstructured.Unstructured {
	t.Helper()
	kind := strings.TrimPrefix(strings.Split(m.text, "\n")[1], "kind: ")
	main := seedKinds[kind]
	text := seedEllipsisItem.ReplaceAllString(m.text, "${1}- name: "+main)
	text = seedEllipsis.ReplaceAllString(text, "")
	text = seedParam.ReplaceAllStringFunc(text, func(s string) string {
		return strings.ReplaceAll(seedParam.FindStringSubmatch(s)[1], "_", "-")
	})
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(text), &u.Object); err != nil {
		t.Fatalf("line %d: %v\n%s", m.line, err, text)
	}
	if kind == "BeamJob" {
		return u // complete as written
	}
	spec, _ := u.Object["spec"].(map[string]any)
	specs, _ := spec["replicaSpecs"].([]any)
	if workerKinds[kind] {
		w, _ := spec["worker"].(map[string]any)
		if w == nil {
			w = map[string]any{}
			spec["worker"] = w
		}
		specs = []any{w}
		if _, ok := spec["config"]; !ok && kind == "DeepSpeedJob" {
			spec["config"] = map[string]any{"run": map[string]any{"python": []any{"train.py"}}}
		}
	}
	if len(specs) == 0 {
		specs = []any{map[string]any{"type": "worker"}}
		spec["replicaSpecs"] = specs
		if el, ok := spec["elastic"].(map[string]any); ok && el["enabled"] == true && spec["torchrunConfig"] == nil {
			spec["torchrunConfig"] = map[string]any{"enabled": true}
		}
	}
	for _, s := range specs {
		rs := s.(map[string]any)
		tmpl, _ := rs["template"].(map[string]any)
		if tmpl == nil {
			tmpl = map[string]any{}
			rs["template"] = tmpl
		}
		ps, _ := tmpl["spec"].(map[string]any)
		if ps == nil {
			if _, elsewhere := tmpl["containers"]; elsewhere {
				continue // written in the wrong place: applied as written
			}
			ps = map[string]any{}
			tmpl["spec"] = ps
		}
		cs, _ := ps["containers"].([]any)
		if len(cs) == 0 {
			cs = []any{map[string]any{}}
			ps["containers"] = cs
		}
		for _, c := range cs {
			cm := c.(map[string]any)
			if cm["name"] == nil {
				cm["name"] = main
			}
			if cm["image"] == nil {
				cm["image"] = "busybox"
			}
		}
	}
	return u
}

// warnings collects the API server's warnings per manifest.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// seedWarnings are the warnings the manual's own mistakes draw: fields that
// do not exist, which the API server drops. Server-side apply refuses such
// fields outright, so these two manifests are created instead.
var seedWarnings = map[int][]string{
	4574: {`unknown field "spec.replicaSpecs[1].template.containers"`},                  // containers outside template.spec
	7064: {`unknown field "spec.replicaSpecs[0].template.spec.volumes[1].secret.name"`}, // secret.name for secretName
}

// testSeedManifests applies every manifest of the four kinds in the manual,
// placeholders filled, with server-side apply (but the two with fields that
// do not exist), each in a namespace of its own: each is admitted, drawing
// no warning but those its own mistakes call for.
func testSeedManifests(t *testing.T, e *env) {
	ms := readGolden(t)
	if len(ms) < 28 {
		t.Fatalf("%d manifests in %s", len(ms), seedGolden)
	}
	for _, m := range ms {
		t.Run(strconv.Itoa(m.line), func(t *testing.T) {
			t.Parallel()
			ctx := testutil.SubtestContext(t)
			u := fillSeed(t, m)
			u.SetNamespace(e.namespace(t, nil))
			w := &warnings{}
			cfg := rest.CopyConfig(e.cp.Config)
			cfg.WarningHandler = w
			c, err := client.New(cfg, client.Options{Scheme: e.cp.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			if seedWarnings[m.line] == nil {
				err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("t9k-manual"), client.ForceOwnership)
			} else {
				// Server-side apply refuses fields the schema lacks; creating
				// (as the console does) drops them with a warning.
				err = c.Create(ctx, u, client.FieldValidation("Warn"))
			}
			if err != nil {
				t.Fatalf("applying the manifest of line %d: %v", m.line, err)
			}
			if diff := strings.Join(w.list, "\n"); diff != strings.Join(seedWarnings[m.line], "\n") {
				t.Errorf("warnings %q, want %q", w.list, seedWarnings[m.line])
			}
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(u.GroupVersionKind())
			if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
				t.Fatal(err)
			}
			checkSeedApplied(ctx, t, e, m, got)
		})
	}
}

// checkSeedApplied checks what the controllers made of one manifest: a job
// they run, or, for the manual's worker template without a spec, a job
// failed with the reason.
func checkSeedApplied(ctx context.Context, t *testing.T, e *env, m seedManifest, u *unstructured.Unstructured) {
	t.Helper()
	obj, err := e.cp.Scheme.New(u.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	job := obj.(client.Object)
	job.SetNamespace(u.GetNamespace())
	job.SetName(u.GetName())
	if bj, ok := job.(*batchv1beta1.BeamJob); ok {
		checkSeedBeamJob(ctx, t, e, bj)
		return
	}
	// The two manifests with fields no schema has lose them, and the pods
	// the rest describes are invalid: the job fails, naming why.
	if want, ok := map[int]string{4574: "spec.containers: Required value", 7064: "secret.secretName: Required value"}[m.line]; ok {
		s := e.waitPhase(ctx, t, job, batchv1beta1.JobFailed)
		if c := condition(t, s, batchv1beta1.JobFailedCond); c.Reason != "CreationFailed" || !strings.Contains(c.Message, want) {
			t.Errorf("Failed condition %+v", c)
		}
		return
	}
	paused := strings.Contains(m.text, "pause:\n      enabled: true")
	want := batchv1beta1.JobPending
	if paused {
		want = batchv1beta1.JobPaused
	}
	e.waitPhase(ctx, t, job, want)
}
