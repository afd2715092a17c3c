//go:build e2e

// Package e2e tests accelstack end to end on the local single-node cluster
// of package test/cluster: the real kubelet, containerd and control plane,
// accelstack installed from its manifests, only the accelerators
// simulated. TestMain brings the cluster up, checks that a second up is a
// no-op, installs accelstack, runs the tests (then the demo, when
// ACCELSTACK_E2E_DEMO is set), crashes the cluster with its workloads
// running, brings it down and fails if the host is not left as it was
// found. Run it with `make test-e2e` (root, a few minutes).
package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/accelstack/accelstack/test/cluster"
	"github.com/accelstack/accelstack/test/cluster/demo"
)

var (
	// clus is the cluster the tests run on.
	clus *cluster.Cluster
	// kube is an administrator's clientset.
	kube *kubernetes.Clientset
)

// demoEnv, when set, makes the run go on, once the tests passed, with what
// `make demo` does after installing (package test/cluster/demo), on the same
// cluster: CI checks the demo without bringing up a cluster of its own.
const demoEnv = "ACCELSTACK_E2E_DEMO"

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx := context.Background()
	ctrllog.SetLogger(klog.NewKlogr())
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "e2e: the local cluster needs root")
		return 1
	}
	var err error
	if clus, err = cluster.New(cluster.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if clus.Running(ctx) {
		fmt.Fprintln(os.Stderr, "e2e: a local cluster is already running; the e2e run brings up its own (make cluster-down first)")
		return 1
	}
	if err := clus.Down(ctx); err != nil { // leftovers of a crashed run
		fmt.Fprintln(os.Stderr, "e2e: cleaning up an earlier cluster:", err)
		return 1
	}
	before, err := cluster.TakeSnapshot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	mem := cluster.SampleMemory(time.Second)
	code := func() int {
		// Up, and a second up that must be a no-op.
		up, err := clus.UpTwice(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: e2e: cluster up:", err)
			return 1
		}
		start := time.Now()
		if err := clus.Install(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: installing accelstack:", err)
			return 1
		}
		install := time.Since(start)
		if kube, err = clus.Client(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		start = time.Now()
		code := m.Run()
		fmt.Printf("e2e timings: cluster up %s, install %s, tests %s\n",
			round(up), round(install), round(time.Since(start)))
		if code == 0 && os.Getenv(demoEnv) != "" {
			start = time.Now()
			if err := demo.Run(ctx, clus, os.Stdout); err != nil {
				fmt.Fprintln(os.Stderr, "FAIL: the demo on the e2e cluster:", err)
				return 1
			}
			fmt.Printf("e2e timings: demo %s\n", round(time.Since(start)))
		}
		return code
	}()
	peak := mem.Stop()
	// A crash with every workload still running (pods, FUSE mounts, the
	// demo's jobs), then the cleanup an up after a crash starts with: the
	// host must come back as the first up found it all the same.
	if err := clus.Crash(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: e2e: crashing the cluster:", err)
		code = 1
	}
	start := time.Now()
	if err := clus.Down(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cluster down after the crash:", err)
		return 1
	}
	fmt.Printf("e2e timings: cluster down after a crash %s; peak memory of the whole cluster %d MiB (logs in %s)\n",
		round(time.Since(start)), peak>>20, clus.LogDir())
	after, err := cluster.TakeSnapshot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if diff := cluster.Diff(before, after); len(diff) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the host is not as the cluster found it:\n  %s\n", strings.Join(diff, "\n  "))
		return 1
	}
	fmt.Println("e2e: the host is as the cluster found it (sysctls, mounts, links, cgroups, iptables, ipsets, processes, listeners, paths)")
	return code
}

func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
