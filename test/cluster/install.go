package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/test/harness"
)

// Namespace is where accelstack runs.
const Namespace = "accelstack-system"

// AscendNodeLabel is the label the Ascend device plugin's DaemonSet
// selects; Install puts it on the node.
const AscendNodeLabel = "accelerator=huawei-Ascend910"

// workloads are what Install waits for, as kubectl rollout targets.
var workloads = []string{
	"deployment/s3", "deployment/controllers", "deployment/csi-s3-controller", "deployment/t9k-scheduler", "deployment/gateway", "deployment/console", "deployment/hydra",
	"daemonset/device-plugin", "daemonset/ascend-device-plugin", "daemonset/node-agent", "daemonset/csi-s3-node",
}

// Install applies accelstack's manifests for this cluster
// (test/cluster/manifests: deploy/ with the local images and simulated
// accelerators), with the demo user of the browser login, and waits until
// every workload is rolled out.
func (c *Cluster) Install(ctx context.Context) error {
	log := klog.FromContext(ctx)
	step := stepper(log, time.Now())
	if _, err := c.Kubectl(ctx, "label", "node", NodeName, AscendNodeLabel, "--overwrite"); err != nil {
		return err
	}
	if err := c.createIdentity(ctx); err != nil {
		return err
	}
	// Server-side apply: the CRDs are too large for the last-applied annotation.
	if _, err := c.Kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-k", filepath.Join(c.root, "test", "cluster", "manifests")); err != nil {
		return err
	}
	step("manifests applied")
	for _, w := range workloads {
		if _, err := c.Kubectl(ctx, "-n", Namespace, "rollout", "status", w, "--timeout=180s"); err != nil {
			return c.describeOnFailure(ctx, err)
		}
	}
	step("accelstack installed", "workloads", len(workloads))
	return nil
}

// describeOnFailure adds what kubectl says about the namespace's pods to err.
func (c *Cluster) describeOnFailure(ctx context.Context, err error) error {
	pods, _ := c.Kubectl(ctx, "-n", Namespace, "get", "pods", "-o", "wide")
	events, _ := c.Kubectl(ctx, "-n", Namespace, "get", "events", "--sort-by=.lastTimestamp")
	return fmt.Errorf("%w\n%s\n%s", err, pods, lastLines([]byte(events), 30))
}

// Kubectl runs the cluster's kubectl as the administrator and returns its
// standard output.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	assets := c.opts.Assets
	if assets == "" {
		var err error
		if assets, err = harness.KubeAssets(); err != nil {
			return "", err
		}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(assets, "kubectl"), append([]string{"--kubeconfig=" + c.Kubeconfig()}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
