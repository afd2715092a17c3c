package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// StartScheduler runs the T9k Scheduler (cmd/scheduler, built once per
// process) against the control plane with the KubeSchedulerConfiguration
// of deploy/scheduler, leader election off, and waits until it serves
// health. extraArgs are added to its command line.
func (cp *ControlPlane) StartScheduler(t testing.TB, extraArgs ...string) *Process {
	t.Helper()
	bin, err := BuildCmd("scheduler")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := cp.writeKubeconfig("t9k-scheduler", []string{"system:masters"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(kubeconfig)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	config, err := schedulerConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	configPath := filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(configPath, config, 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	args := append([]string{
		"--config=" + configPath,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
	}, extraArgs...)
	p := StartProcess(t, "t9k-scheduler", bin, args)
	if err := p.WaitReady(90*time.Second, HealthzProbe(port)); err != nil {
		t.Fatalf("waiting for t9k-scheduler: %v\n%s", err, p.Log())
	}
	return p
}

// schedulerConfig is deploy/scheduler's configuration for a scheduler that
// reaches the API server through kubeconfig and elects no leader.
func schedulerConfig(kubeconfig string) ([]byte, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy", "scheduler", "scheduler-config.yaml"))
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("deploy/scheduler/scheduler-config.yaml: %w", err)
	}
	cfg["leaderElection"] = map[string]any{"leaderElect": false}
	cfg["clientConnection"] = map[string]any{"kubeconfig": kubeconfig, "qps": 200, "burst": 400}
	return yaml.Marshal(cfg)
}
