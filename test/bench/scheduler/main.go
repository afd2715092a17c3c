// Command scheduler benchmarks the T9k Scheduler (cmd/scheduler) against
// the default kube-scheduler and the coscheduling plugin of
// scheduler-plugins, side by side on one fake cluster.
//
// The cluster is envtest (a real kube-apiserver and etcd with the project's
// CRDs and scheduler-plugins' PodGroup CRD) with -nodes nodes of
// -gpus-per-node nvidia.com/gpu each, which kwok (make bench-tools builds
// it) keeps Ready and whose bound pods it reports Running; without kwok
// the bench writes the nodes' status itself. Each scheduler runs as a
// process of its own, one at a time, with the same client limit, and every
// measurement has pods of its own, deleted before the next:
//
//   - plain pods: -pods pending pods, then the scheduler started; pods bound
//     per second from the first bind to the last, T9k (one open queue, no
//     quota) against kube-scheduler, -throughput-rounds times, every
//     second round with kube-scheduler first; the ratio is of the means;
//   - gangs: -gangs PodGroups of -gang-size pods created at once while the
//     scheduler runs; the time until all are bound and the pods bound in
//     gangs not wholly bound, sampled every 250ms, T9k against
//     coscheduling;
//   - preemption: the nodes filled with pods of -queues-1 low-priority
//     queues, then pods of one high-priority queue created one at a time;
//     from each one's creation to its victim marked for deletion or itself
//     nominated (the decision) and to it bound.
//
// It reports and asserts nothing: the markdown it prints is what make bench
// writes into docs/benchmarks.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/test/harness"
)

// options are the bench's flags.
type options struct {
	nodes, gpusPerNode int
	// pods plain pods of podGPUs GPUs each.
	pods, podGPUs int
	// gangs of gangSize pods of gangGPUs GPUs each.
	gangs, gangSize, gangGPUs int
	// queues in the preemption measurement, all but one low-priority,
	// whose pods of fillGPUs GPUs fill the nodes; preemptions pods of the
	// high-priority one, created one at a time.
	queues, fillGPUs, preemptions int
	// rounds of the plain-pod measurement; every second round measures the peer
	// first.
	rounds int
	// qps is every scheduler's client limit (qps and burst).
	qps int
	// timeout bounds each wait for pods to be bound.
	timeout time.Duration
	// kwok runs the nodes with kwok; coscheduling and kubeScheduler include
	// the peers.
	kwok, coscheduling, kubeScheduler bool
	// only lists the measurements to run.
	only string
}

func main() {
	var o options
	flag.IntVar(&o.nodes, "nodes", 1000, "Fake nodes.")
	flag.IntVar(&o.gpusPerNode, "gpus-per-node", 8, "nvidia.com/gpu of each node.")
	flag.IntVar(&o.pods, "pods", 10000, "Plain pods of the throughput measurement.")
	flag.IntVar(&o.podGPUs, "pod-gpus", 0, "GPUs of each plain pod.")
	flag.IntVar(&o.gangs, "gangs", 500, "Gangs (PodGroups) created at once.")
	flag.IntVar(&o.gangSize, "gang-size", 8, "Pods of each gang, all of them its minMember.")
	flag.IntVar(&o.gangGPUs, "gang-gpus", 1, "GPUs of each gang pod.")
	flag.IntVar(&o.queues, "queues", 100, "Queues of the preemption measurement: one high-priority, the others low.")
	flag.IntVar(&o.fillGPUs, "fill-gpus", 1, "GPUs of each low-priority pod filling the nodes, and of each preemptor.")
	flag.IntVar(&o.preemptions, "preemptions", 100, "Preemptors created one at a time.")
	flag.IntVar(&o.rounds, "throughput-rounds", 2, "Rounds of the plain-pod measurement; every second round measures the peer first, so that neither scheduler always runs on the freshest cluster.")
	flag.IntVar(&o.qps, "qps", 1000, "Client QPS and burst of every scheduler.")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "How long each scheduler may take to bind a measurement's pods.")
	flag.BoolVar(&o.kwok, "kwok", true, "Run the nodes with kwok (make bench-tools builds it); false: the bench writes their status.")
	flag.BoolVar(&o.coscheduling, "coscheduling", true, "Also measure scheduler-plugins coscheduling (make bench-tools builds it).")
	flag.BoolVar(&o.kubeScheduler, "kube-scheduler", true, "Also measure the default kube-scheduler.")
	flag.StringVar(&o.only, "only", "throughput,gangs,preemption", "The measurements to run, comma-separated.")
	flag.Parse()
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	if o.queues < 2 || o.fillGPUs < 1 || o.gangSize < 1 || o.nodes < 1 || o.rounds < 1 {
		fmt.Fprintln(os.Stderr, "bench scheduler: need -queues ≥ 2, -fill-gpus ≥ 1, -gang-size ≥ 1, -nodes ≥ 1, -throughput-rounds ≥ 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench scheduler:", err)
		os.Exit(1)
	}
}

// results is everything measured, for the report.
type results struct {
	cluster    string
	throughput []throughputResult
	gangs      []gangResult
	preemption *preemptionResult
}

func run(ctx context.Context, o options) (err error) {
	wants := map[string]bool{}
	for _, m := range strings.Split(o.only, ",") {
		wants[strings.TrimSpace(m)] = true
	}
	t9k, err := t9kScheduler()
	if err != nil {
		return err
	}
	var kube *schedulerBin
	if o.kubeScheduler && wants["throughput"] {
		k, err := kubeScheduler()
		if err != nil {
			return err
		}
		kube = &k
	}
	var plugins *schedulerBin
	var crds []string
	if o.coscheduling && wants["gangs"] {
		s, crd, err := findSchedulerPlugins()
		if err != nil {
			return err
		}
		plugins, crds = &s, []string{crd}
	}
	cl, err := startCluster(ctx, o, crds)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cl.stop()) }()
	var res results
	if cl.kwok != nil {
		// kwok --version: "kwok version v0.7.0 go1.26.8 (linux/amd64)".
		v := strings.Fields(strings.TrimPrefix(cl.kwokVersion, "kwok version "))
		res.cluster = "kwok (its default stages: nodes Ready with a heartbeat Lease, bound pods Running, deleted pods gone)"
		if len(v) > 0 {
			res.cluster = "kwok " + v[0] + strings.TrimPrefix(res.cluster, "kwok")
		}
	} else {
		res.cluster = "no kwok (" + cl.kwokMissing + "): plain Node objects whose status the bench wrote, pods never Running"
	}
	if err := queue(ctx, cl.c, openQueue, 0); err != nil {
		return err
	}

	if wants["throughput"] {
		runs := []schedulerBin{t9k}
		if kube != nil {
			runs = append(runs, *kube)
		}
		for round := range o.rounds {
			order := slices.Clone(runs)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, s := range order {
				r, err := measureThroughput(ctx, cl, s, o, fmt.Sprint(len(res.throughput)))
				if err != nil {
					return fmt.Errorf("%s: %w", s.name, err)
				}
				r.round = round + 1
				res.throughput = append(res.throughput, r)
			}
		}
	}
	if wants["gangs"] {
		r, err := measureGangs(ctx, cl, t9k, t9kGangs, o, "t9k")
		if err != nil {
			return fmt.Errorf("%s: %w", t9k.name, err)
		}
		res.gangs = append(res.gangs, r)
		if plugins != nil {
			r, err := measureGangs(ctx, cl, *plugins, coschedulingGangs, o, "coscheduling")
			if err != nil {
				return fmt.Errorf("%s: %w", plugins.name, err)
			}
			res.gangs = append(res.gangs, r)
		}
	}
	if wants["preemption"] {
		// Only the measurement's own queues exist while it runs.
		if err := cl.c.Delete(ctx, &schedv1beta1.Queue{ObjectMeta: metaName(openQueue)}); err != nil {
			return err
		}
		r, err := measurePreemption(ctx, cl, t9k, o)
		if err != nil {
			return fmt.Errorf("%s: %w", t9k.name, err)
		}
		res.preemption = &r
	}
	report(os.Stdout, o, res)
	return nil
}

// findSchedulerPlugins finds the scheduler-plugins binary make bench-tools
// builds (its version is in its file name) and the coscheduling PodGroup
// CRD of that module version.
func findSchedulerPlugins() (schedulerBin, string, error) {
	bin, err := harness.Tool("scheduler-plugins")
	if err != nil {
		return schedulerBin{}, "", fmt.Errorf("%w (make bench-tools builds it)", err)
	}
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return schedulerBin{}, "", err
	}
	version, ok := strings.CutPrefix(filepath.Base(real), "scheduler-plugins-")
	if !ok || !strings.HasPrefix(version, "v") {
		return schedulerBin{}, "", fmt.Errorf("%s: no version in the file name (make bench-tools installs scheduler-plugins-VERSION)", real)
	}
	dir, err := harness.ModuleDir("sigs.k8s.io/scheduler-plugins", version)
	if err != nil {
		return schedulerBin{}, "", err
	}
	crd := filepath.Join(dir, "manifests", "coscheduling", "crd.yaml")
	if _, err := os.Stat(crd); err != nil {
		return schedulerBin{}, "", err
	}
	return pluginsScheduler(version, real), crd, nil
}
