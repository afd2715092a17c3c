package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/accelstack/accelstack/test/harness"
)

// promtool returns the promtool binary, failing in CI and skipping
// elsewhere when it is missing.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("promtool not installed: %v", err)
		}
		t.Skipf("promtool not installed (Debian package prometheus): %v", err)
	}
	return p
}

func monitoringDir(t *testing.T) string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "deploy", "monitoring")
}

// TestAlertRules checks both forms of the alert rules with promtool, that
// they hold the same groups, that every alert the seed lists is there,
// and runs the rule unit tests in alerts_test.yaml.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	tool := promtool(t)
	dir := monitoringDir(t)
	plain := filepath.Join(dir, "alerts.rules.yaml")
	if out, err := exec.Command(tool, "check", "rules", plain).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules %s: %v\n%s", plain, err, out)
	}

	var rules, operator struct {
		Groups []struct {
			Name  string           `json:"name"`
			Rules []map[string]any `json:"rules"`
		} `json:"groups"`
		Spec json.RawMessage `json:"spec"`
	}
	readYAML(t, plain, &rules)
	readYAML(t, filepath.Join(dir, "prometheusrule.yaml"), &operator)
	specFile := filepath.Join(t.TempDir(), "prometheusrule-spec.yaml")
	if err := os.WriteFile(specFile, operator.Spec, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tool, "check", "rules", specFile).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules on the PrometheusRule spec: %v\n%s", err, out)
	}
	if err := yaml.Unmarshal(operator.Spec, &operator); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rules.Groups, operator.Groups); diff != "" {
		t.Errorf("PrometheusRule differs from alerts.rules.yaml (-rules +PrometheusRule):\n%s", diff)
	}

	var got []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			got = append(got, r["alert"].(string))
		}
	}
	want := []string{"KubePodCrashLooping", "KubeImagePullError", "KubeContainerOOM", "KubeQuotaAlmostFull", "KubeQuotaFullyUsed",
		"KubeQuotaExceeded", "KubePersistentVolumeFillingUp", "T9kJobFailed", "T9kNotebookNotReady", "T9kTensorBoardNotReady",
		"T9kMLServiceNotReady", "T9kSimpleMLServiceNotReady", "GPUXIDError", "GPUUnhealthy", "GPUOverheating"}
	for _, w := range want {
		if !contains(got, w) {
			t.Errorf("alert %s missing; have %v", w, got)
		}
	}

	cmd := exec.Command(tool, "test", "rules", "alerts_test.yaml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// compatLint reports whether a promtool lint finding is about
// dcgm-exporter's own names (counters without _total, the camelCase
// modelName label), kept on purpose so existing dashboards and alert rules
// work unchanged.
func compatLint(line string) bool {
	switch line {
	case `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter metrics should have "_total" suffix`,
		`DCGM_FI_DEV_PCIE_REPLAY_COUNTER counter metrics should have "_total" suffix`,
		`DCGM_FI_DEV_PCIE_REPLAY_COUNTER metric name should not include type 'counter'`:
		return true
	}
	name, finding, _ := strings.Cut(line, " ")
	return finding == "label names should be written in 'snake_case' not 'camelCase'" &&
		(strings.HasPrefix(name, "DCGM_FI_DEV_") || name == "accelstack_gpu_healthy")
}

// TestNodeAgentMetricsLint runs promtool check metrics on a real scrape of
// the agent (simulated MIG-mixed DGX A100); the only findings allowed are
// the dcgm-exporter compatibility names.
func TestNodeAgentMetricsLint(t *testing.T) {
	t.Parallel()
	tool := promtool(t)
	base, _ := startNodeAgent(t, "--backend=simulated", "--simulate=dgxa100-mig-mixed", "--collect-interval=200ms", "--pod-resources-socket=")
	var body []byte
	naEventually(t, "scrape with GPU series", func() error {
		var err error
		body, err = naGet(context.Background(), base+"/metrics")
		if err == nil && !bytes.Contains(body, []byte("DCGM_FI_DEV_GPU_UTIL{")) {
			err = os.ErrNotExist
		}
		return err
	})
	cmd := exec.Command(tool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	// promtool exits 3 when it has lint findings (checked line by line
	// below); anything else but 0 means it could not check the scrape.
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 3 || len(bytes.TrimSpace(out)) == 0) {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" && !compatLint(line) {
			t.Errorf("promtool check metrics: %s", line)
		}
	}
	for _, name := range []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
		"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_SM_CLOCK",
		"DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "accelstack_gpu_healthy",
		"accelstack_node_agent_collection_duration_seconds", "accelstack_node_agent_collection_errors_total"} {
		if !bytes.Contains(body, []byte("\n"+name)) {
			t.Errorf("scrape lacks %s", name)
		}
	}
	if !bytes.Contains(body, []byte(`GPU_I_PROFILE="1g.5gb"`)) {
		t.Error("scrape lacks MIG series (GPU_I_PROFILE)")
	}
}
