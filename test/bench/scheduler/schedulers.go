package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/accelstack/accelstack/test/harness"
)

// schedulerBin is one scheduler binary with the configuration the bench
// runs it with.
type schedulerBin struct {
	// name is its row in the tables.
	name string
	// profile is the schedulerName of its pods.
	profile string
	bin     string
	// config is its KubeSchedulerConfiguration, without clientConnection
	// and leaderElection (the bench sets them the same for every scheduler).
	config map[string]any
	// args are extra command-line arguments.
	args []string
}

// t9kScheduler is cmd/scheduler with deploy/scheduler's configuration.
func t9kScheduler() (schedulerBin, error) {
	bin, err := harness.BuildCmd("scheduler")
	if err != nil {
		return schedulerBin{}, err
	}
	root, err := harness.RepoRoot()
	if err != nil {
		return schedulerBin{}, err
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy", "scheduler", "scheduler-config.yaml"))
	if err != nil {
		return schedulerBin{}, err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return schedulerBin{}, fmt.Errorf("deploy/scheduler/scheduler-config.yaml: %w", err)
	}
	return schedulerBin{name: "t9k-scheduler", profile: "t9k-scheduler", bin: bin, config: cfg}, nil
}

// kubeScheduler is the kube-scheduler of the control plane's Kubernetes
// test binaries with its default profile.
func kubeScheduler() (schedulerBin, error) {
	assets, err := harness.KubeAssets()
	if err != nil {
		return schedulerBin{}, err
	}
	bin := filepath.Join(assets, "kube-scheduler")
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return schedulerBin{}, fmt.Errorf("%s --version: %w", bin, err)
	}
	version := strings.TrimPrefix(strings.TrimSpace(string(out)), "Kubernetes ")
	return schedulerBin{
		name: "kube-scheduler " + version + " (default profile)", profile: "default-scheduler", bin: bin,
		config: map[string]any{
			"apiVersion": "kubescheduler.config.k8s.io/v1",
			"kind":       "KubeSchedulerConfiguration",
			"profiles":   []any{map[string]any{"schedulerName": "default-scheduler"}},
		},
	}, nil
}

// coschedulingProfile is the schedulerName of the coscheduling profile.
const coschedulingProfile = "coscheduling"

// pluginsScheduler is the scheduler of scheduler-plugins with one profile,
// its manifests' coscheduling configuration (Coscheduling at every
// extension point and as the queue sort, permitWaitingTimeSeconds 10).
func pluginsScheduler(version, bin string) schedulerBin {
	return schedulerBin{
		name: "scheduler-plugins " + version + " coscheduling", profile: coschedulingProfile, bin: bin,
		config: map[string]any{
			"apiVersion": "kubescheduler.config.k8s.io/v1",
			"kind":       "KubeSchedulerConfiguration",
			"profiles": []any{map[string]any{
				"schedulerName": coschedulingProfile,
				"plugins": map[string]any{
					"multiPoint": map[string]any{"enabled": []any{map[string]any{"name": "Coscheduling"}}},
					"queueSort": map[string]any{
						"enabled":  []any{map[string]any{"name": "Coscheduling"}},
						"disabled": []any{map[string]any{"name": "*"}},
					},
				},
				"pluginConfig": []any{map[string]any{
					"name": "Coscheduling",
					"args": map[string]any{"permitWaitingTimeSeconds": 10},
				}},
			}},
		},
	}
}

// start runs the scheduler against cl with the cluster's admin kubeconfig,
// no leader election and a client limit of qps, and waits until it serves
// health.
func (s schedulerBin) start(cl *cluster, qps int, logName string) (*harness.Process, error) {
	cfg := map[string]any{}
	for k, v := range s.config {
		cfg[k] = v
	}
	cfg["leaderElection"] = map[string]any{"leaderElect": false}
	cfg["clientConnection"] = map[string]any{"kubeconfig": cl.cp.KubeconfigPath, "qps": qps, "burst": qps}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	config := filepath.Join(cl.dir, logName+"-config.yaml")
	if err := os.WriteFile(config, b, 0o600); err != nil {
		return nil, err
	}
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{
		"--config=" + config,
		"--authentication-kubeconfig=" + cl.cp.KubeconfigPath,
		"--authorization-kubeconfig=" + cl.cp.KubeconfigPath,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
	}, s.args...)
	p, err := harness.RunProcess(logName, s.bin, args, filepath.Join(cl.dir, logName+".log"))
	if err != nil {
		return nil, err
	}
	if err := p.WaitReady(2*time.Minute, harness.HealthzProbe(port)); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return p, nil
}
