package workloadmetrics

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/accelstack/accelstack/pkg/jobs/kinds"
	"github.com/accelstack/accelstack/pkg/workloadmetrics"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// tool finds a Prometheus binary, skipping the test outside CI without it.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed: %v", name, err)
		}
		t.Skipf("%s not installed (Debian package prometheus): %v", name, err)
	}
	return p
}

// workloads are the objects the test creates, with the status it writes.
var workloads = []string{`
apiVersion: batch.tensorstack.dev/v1beta1
kind: GenericJob
metadata: {name: failed}
spec:
  replicaSpecs:
    - type: worker
      template: {spec: {containers: [{name: worker, image: busybox}]}}
status: {phase: Failed}
`, `
apiVersion: batch.tensorstack.dev/v1beta1
kind: GenericJob
metadata: {name: succeeded}
spec:
  replicaSpecs:
    - type: worker
      template: {spec: {containers: [{name: worker, image: busybox}]}}
status: {phase: Succeeded}
`, `
apiVersion: tensorstack.dev/v1beta1
kind: Notebook
metadata: {name: stuck}
spec:
  template: {spec: {containers: [{name: notebook, image: jupyter}]}}
status:
  phase: Pending
  conditions: [{type: Ready, status: "False", reason: PodNotReady, lastTransitionTime: "2024-05-10T02:51:41Z"}]
`, `
apiVersion: tensorstack.dev/v1beta1
kind: Notebook
metadata: {name: paused}
spec:
  suspend: true
  template: {spec: {containers: [{name: notebook, image: jupyter}]}}
status:
  phase: Suspended
  conditions: [{type: Ready, status: "False", reason: Suspended, lastTransitionTime: "2024-05-10T02:51:41Z"}]
`, `
apiVersion: tensorstack.dev/v1beta1
kind: Notebook
metadata: {name: serving}
spec:
  template: {spec: {containers: [{name: notebook, image: jupyter}]}}
status:
  phase: Running
  conditions: [{type: Ready, status: "True", reason: PodReady, lastTransitionTime: "2024-05-10T02:51:41Z"}]
`, `
apiVersion: tensorstack.dev/v1beta1
kind: TensorBoard
metadata: {name: board}
spec: {image: tensorboard}
status: {phase: Pending}
`, `
apiVersion: tensorstack.dev/v1beta1
kind: SimpleMLService
metadata: {name: simple}
spec:
  custom: {spec: {containers: [{name: server, image: server}]}}
status:
  conditions: [{type: Ready, status: "False", reason: MinimumReplicasUnavailable, lastTransitionTime: "2024-05-10T02:51:41Z"}]
`, `
apiVersion: tensorstack.dev/v1beta1
kind: MLService
metadata: {name: mls}
spec:
  default: v1
  releases:
    - name: v1
      predictor:
        template: {spec: {containers: [{name: server, image: server}]}}
status:
  conditions: [{type: Ready, status: "False", reason: ReleaseNotReady, lastTransitionTime: "2024-05-10T02:51:41Z"}]
`, `
apiVersion: tensorstack.dev/v1beta1
kind: MLService
metadata: {name: mls-paused}
spec:
  default: v1
  releases:
    - name: v1
      predictor:
        template: {spec: {containers: [{name: server, image: server}]}}
status:
  conditions:
    - {type: Ready, status: "False", reason: Paused, lastTransitionTime: "2024-05-10T02:51:41Z"}
    - {type: Paused, status: "True", reason: Paused, lastTransitionTime: "2024-05-10T02:51:41Z"}
`}

// env is the control plane, the workloads' namespace and the metrics
// endpoint.
type env struct {
	ns      string
	metrics string
}

func startEnv(t *testing.T) *env {
	t.Helper()
	ctrl.SetLogger(logr.Discard())
	cp := harness.StartControlPlane(t)
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{
		Scheme: cp.Scheme, Logger: logr.Discard(),
		Metrics:    metricsserver.Options{BindAddress: addr},
		Controller: config.Controller{SkipNameValidation: ptrTo(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := workloadmetrics.Setup(mgr, kinds.Registered()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	e := &env{ns: testutil.Namespace(t, cp.Client, "wm", nil), metrics: "http://" + addr + "/metrics"}
	create := func(doc string) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		status := u.Object["status"]
		delete(u.Object, "status")
		u.SetNamespace(e.ns)
		if err := cp.Client.Create(context.Background(), u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		u.Object["status"] = status
		if err := cp.Client.Status().Update(context.Background(), u); err != nil {
			t.Fatalf("writing the status of %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	for _, doc := range workloads {
		create(doc)
	}
	return e
}

func ptrTo[T any](v T) *T { return &v }

// get returns the body of url.
func get(ctx context.Context, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return string(b), err
}

// scrape waits until the endpoint reports every workload and returns the
// accelstack_workload_* lines of the exposition, and the whole of it.
func (e *env) scrape(t *testing.T, want ...string) ([]string, string) {
	t.Helper()
	var lines []string
	var body string
	testutil.Eventually(testutil.Context(t), t, 30*time.Second, "the workload metrics", func() (bool, string, error) {
		var err error
		body, err = get(context.Background(), e.metrics)
		if err != nil {
			return false, err.Error(), nil //nolint:nilerr // not serving yet: poll again
		}
		lines = nil
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, "accelstack_workload_") {
				lines = append(lines, l)
			}
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				return false, strings.Join(lines, "\n"), nil
			}
		}
		return true, "", nil
	})
	return lines, body
}

// TestWorkloadMetrics runs the tests against one control plane.
func TestWorkloadMetrics(t *testing.T) {
	e := startEnv(t)
	series := func(metric, kind, name, extra string) string {
		return fmt.Sprintf(`%s{kind=%q,name=%q,namespace=%q%s}`, metric, kind, name, e.ns, extra)
	}
	want := []string{
		series(workloadmetrics.PhaseMetric, "GenericJob", "failed", `,phase="Failed"`) + " 1",
		series(workloadmetrics.PhaseMetric, "GenericJob", "succeeded", `,phase="Succeeded"`) + " 1",
		series(workloadmetrics.ReadyMetric, "Notebook", "stuck", "") + " 0",
		series(workloadmetrics.ReadyMetric, "Notebook", "serving", "") + " 1",
		series(workloadmetrics.PausedMetric, "Notebook", "paused", "") + " 1",
		series(workloadmetrics.PausedMetric, "Notebook", "stuck", "") + " 0",
		series(workloadmetrics.ReadySinceMetric, "Notebook", "stuck", "") + " 1.715309501e+09",
		series(workloadmetrics.ReadyMetric, "TensorBoard", "board", "") + " 0",
		series(workloadmetrics.PhaseMetric, "TensorBoard", "board", `,phase="Pending"`) + " 1",
		series(workloadmetrics.ReadyMetric, "SimpleMLService", "simple", "") + " 0",
		series(workloadmetrics.ReadyMetric, "MLService", "mls", "") + " 0",
		series(workloadmetrics.PausedMetric, "MLService", "mls", "") + " 0",
		series(workloadmetrics.PausedMetric, "MLService", "mls-paused", "") + " 1",
	}
	lines, body := e.scrape(t, want...)

	t.Run("Lint", func(t *testing.T) {
		var families strings.Builder
		for _, l := range strings.Split(body, "\n") {
			if strings.Contains(l, "accelstack_workload_") {
				families.WriteString(l + "\n")
			}
		}
		cmd := exec.Command(tool(t, "promtool"), "check", "metrics")
		cmd.Stdin = strings.NewReader(families.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	})
	t.Run("RuleTests", func(t *testing.T) { e.testRules(t, lines) })
	t.Run("Prometheus", func(t *testing.T) { e.testPrometheus(t) })
}

// alert is one expected alert of a promtool test.
type alert struct {
	Labels      map[string]string `json:"exp_labels"`
	Annotations map[string]string `json:"exp_annotations"`
}

// ruleTest is one alert_rule_test entry.
type ruleTest struct {
	EvalTime  string  `json:"eval_time"`
	AlertName string  `json:"alertname"`
	Alerts    []alert `json:"exp_alerts"`
}

var sample = regexp.MustCompile(`^(\S+\{[^}]*\}) (\S+)$`)

// testRules replays the scraped series, and kube-state-metrics quota
// series, through promtool test rules against deploy/monitoring's rules.
func (e *env) testRules(t *testing.T, lines []string) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	type input struct {
		Series string `json:"series"`
		Values string `json:"values"`
	}
	var inputs []input
	for _, l := range lines {
		m := sample.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unparsed sample %q", l)
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", l, err)
		}
		inputs = append(inputs, input{Series: m[1], Values: strconv.FormatFloat(v, 'f', -1, 64) + "+0x30"})
	}
	// kube-state-metrics' documented kube_resourcequota series: GPUs at
	// 95%, CPUs full, pods over.
	quota := func(resource, typ, v string) input {
		return input{Series: fmt.Sprintf(`kube_resourcequota{namespace=%q,resourcequota="managed-project-quota",resource=%q,type=%q}`, e.ns, resource, typ), Values: v + "+0x30"}
	}
	inputs = append(inputs,
		quota("requests.nvidia.com/gpu", "hard", "20"), quota("requests.nvidia.com/gpu", "used", "19"),
		quota("requests.cpu", "hard", "8"), quota("requests.cpu", "used", "8"),
		quota("pods", "hard", "10"), quota("pods", "used", "12"),
		quota("memory", "hard", "64"), quota("memory", "used", "1"),
	)
	ns := e.ns
	warn := func(extra map[string]string) map[string]string {
		l := map[string]string{"severity": "warning", "namespace": ns}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	quotaLabels := func(resource, severity string) map[string]string {
		return map[string]string{"severity": severity, "namespace": ns, "resourcequota": "managed-project-quota", "resource": resource}
	}
	tests := []ruleTest{
		{EvalTime: "1m", AlertName: "T9kJobFailed", Alerts: []alert{{
			Labels:      warn(map[string]string{"kind": "GenericJob", "name": "failed"}),
			Annotations: map[string]string{"summary": "T9k Job failed.", "description": "GenericJob " + ns + "/failed failed."},
		}}},
		{EvalTime: "10m", AlertName: "T9kNotebookNotReady"},
		{EvalTime: "20m", AlertName: "T9kNotebookNotReady", Alerts: []alert{{
			Labels: warn(map[string]string{"name": "stuck"}),
			Annotations: map[string]string{"summary": "Notebook is not ready.",
				"description": "Notebook " + ns + "/stuck is not paused and has not been ready for 15 minutes."},
		}}},
		{EvalTime: "20m", AlertName: "T9kTensorBoardNotReady", Alerts: []alert{{
			Labels: warn(map[string]string{"name": "board"}),
			Annotations: map[string]string{"summary": "TensorBoard is not ready.",
				"description": "TensorBoard " + ns + "/board is not paused and has not been ready for 15 minutes."},
		}}},
		{EvalTime: "20m", AlertName: "KubeQuotaAlmostFull", Alerts: []alert{{
			Labels: quotaLabels("requests.nvidia.com/gpu", "info"),
			Annotations: map[string]string{"summary": "Namespace quota is almost full.",
				"description": "Namespace " + ns + " uses 95% of its requests.nvidia.com/gpu quota."},
		}}},
		{EvalTime: "20m", AlertName: "KubeQuotaFullyUsed", Alerts: []alert{{
			Labels: quotaLabels("requests.cpu", "info"),
			Annotations: map[string]string{"summary": "Namespace quota is fully used.",
				"description": "Namespace " + ns + " uses all of its requests.cpu quota; new pods asking for it are refused."},
		}}},
		{EvalTime: "20m", AlertName: "KubeQuotaExceeded", Alerts: []alert{{
			Labels: quotaLabels("pods", "warning"),
			Annotations: map[string]string{"summary": "Namespace quota is exceeded.",
				"description": "Namespace " + ns + " uses 120% of its pods quota."},
		}}},
		{EvalTime: "10m", AlertName: "KubeQuotaExceeded"},
	}
	tests = append(tests,
		ruleTest{EvalTime: "20m", AlertName: "T9kSimpleMLServiceNotReady", Alerts: []alert{{
			Labels: warn(map[string]string{"name": "simple"}),
			Annotations: map[string]string{"summary": "SimpleMLService is not ready.",
				"description": "SimpleMLService " + ns + "/simple has not been ready for 15 minutes."},
		}}},
		// The paused MLService raises no alert.
		ruleTest{EvalTime: "20m", AlertName: "T9kMLServiceNotReady", Alerts: []alert{{
			Labels: warn(map[string]string{"name": "mls"}),
			Annotations: map[string]string{"summary": "MLService is not ready.",
				"description": "MLService " + ns + "/mls is not paused and has not been ready for 15 minutes."},
		}}},
		ruleTest{EvalTime: "10m", AlertName: "T9kMLServiceNotReady"},
	)
	doc := map[string]any{
		"rule_files":          []string{filepath.Join(root, "deploy", "monitoring", "alerts.rules.yaml")},
		"evaluation_interval": "1m",
		"tests":               []any{map[string]any{"interval": "1m", "input_series": inputs, "alert_rule_test": tests}},
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "workload_alerts_test.yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool(t, "promtool"), "test", "rules", file).CombinedOutput()
	if err != nil {
		t.Errorf("promtool test rules: %v\n%s\n--- test file:\n%s", err, out, b)
	}
}

// testPrometheus has a real Prometheus scrape the endpoint and evaluate
// the rules, their hold times cut to nothing, and finds the alerts.
func (e *env) testPrometheus(t *testing.T) {
	bin := tool(t, "prometheus")
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile(filepath.Join(root, "deploy", "monitoring", "alerts.rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	held := regexp.MustCompile(`(?m)^(\s+)for: \S+$`).ReplaceAll(rules, []byte("${1}for: 0s"))
	if err := os.WriteFile(filepath.Join(dir, "alerts.rules.yaml"), held, 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(e.metrics)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [alerts.rules.yaml]
scrape_configs:
  - job_name: controllers
    static_configs:
      - targets: [%q]
`, u.Host)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	prom := harness.StartProcess(t, "prometheus", bin, []string{
		"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
	})
	if err := prom.WaitReady(60*time.Second, func(ctx context.Context) error {
		_, err := get(ctx, "http://"+addr+"/-/ready")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"T9kJobFailed GenericJob/failed",
		"T9kNotebookNotReady /stuck",
		"T9kTensorBoardNotReady /board",
		"T9kSimpleMLServiceNotReady /simple",
		"T9kMLServiceNotReady /mls",
	}
	sort.Strings(want)
	testutil.Eventually(testutil.Context(t), t, 60*time.Second, "firing T9k alerts", func() (bool, string, error) {
		got, err := firing(addr, e.ns)
		if err != nil {
			return false, err.Error(), nil //nolint:nilerr // Prometheus not there yet: poll again
		}
		return strings.Join(got, "\n") == strings.Join(want, "\n"), strings.Join(got, "; "), nil
	})
}

// firing returns "alertname kind/name" of the firing alerts about ns.
func firing(addr, ns string) ([]string, error) {
	body, err := get(context.Background(), "http://"+addr+"/api/v1/alerts")
	if err != nil {
		return nil, err
	}
	var resp struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", body, err)
	}
	var out []string
	for _, a := range resp.Data.Alerts {
		if a.State != "firing" || a.Labels["namespace"] != ns || !strings.HasPrefix(a.Labels["alertname"], "T9k") {
			continue
		}
		out = append(out, a.Labels["alertname"]+" "+a.Labels["kind"]+"/"+a.Labels["name"])
	}
	sort.Strings(out)
	return out, nil
}
