package main

import (
	"fmt"
	"io"
	"runtime"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelstack/accelstack/test/harness"
)

// report prints the results as markdown: one table per measurement, with
// the ratios of T9k to its peer.
func report(out io.Writer, o options, r results) {
	fmt.Fprintf(out, "%d fake nodes of %d `nvidia.com/gpu` (64 cpu, 512Gi) on envtest (a real kube-apiserver and etcd), "+
		"run by %s, %d CPUs. Every scheduler runs as a process of its own, one at a time, with a client limit of %d QPS "+
		"(burst as much), against the same control plane; each measurement creates pods of its own and deletes them "+
		"afterwards. Times are by the bench's watch of the pods. The API server, etcd, kwok, the bench and the scheduler "+
		"share the CPUs.\n\n",
		o.nodes, o.gpusPerNode, r.cluster, runtime.NumCPU(), o.qps)

	if len(r.throughput) > 0 {
		fmt.Fprintf(out, "**Plain pods.** %d pending pods (100m cpu, 128Mi, %s each) created before the scheduler starts; "+
			"T9k's in one queue open to every namespace, without quota.\n\n", o.pods, gpus(o.podGPUs))
		fmt.Fprintln(out, "| round | scheduler | pods bound | first to last bind | pods bound per second | start to last bind | CPU |")
		fmt.Fprintln(out, "|---|---|---|---|---|---|---|")
		for _, t := range r.throughput {
			fmt.Fprintf(out, "| %d | %s | %d of %d | %s | %.0f | %s | %s |\n", t.round, t.name, t.bound, o.pods,
				seconds(t.firstToLast), t.rate(), seconds(t.fromStart), seconds(t.cpu))
		}
		ours, peer := r.throughput[0].name, ""
		for _, t := range r.throughput {
			if t.name != ours {
				peer = t.name
			}
		}
		if o9k, op := meanRate(r.throughput, ours), meanRate(r.throughput, peer); peer != "" && op > 0 {
			fmt.Fprintf(out, "\nRatio of the mean pods per second over %d rounds (odd rounds measure %s first, even ones %s), "+
				"%s to %s: **%.2f** (target ≥ 0.9).\n\n", o.rounds, ours, peer, ours, peer, o9k/op)
		} else {
			fmt.Fprintln(out)
		}
	}

	if len(r.gangs) > 0 {
		fmt.Fprintf(out, "**Gangs.** %d PodGroups of %d pods (minMember %d, %s a pod) created at once, 16 at a time, while "+
			"the scheduler runs (T9k's in the open queue, its gang timeout as shipped; coscheduling with its manifests' "+
			"permitWaitingTimeSeconds 10). Pods in partial gangs: pods bound in gangs with fewer than %d bound, sampled "+
			"every 250ms (the most in one sample: binds in flight count); stuck: gangs partly bound for %s or longer; bind spread: from a gang's first pod bound to its last. The bench's own creation of the gangs (all created after) "+
			"bounds the time until all are bound from below.\n\n",
			o.gangs, o.gangSize, o.gangSize, gpus(o.gangGPUs), o.gangSize, stuckAfter)
		fmt.Fprintln(out, "| scheduler | all created after | all bound after | pods bound | pods in partial gangs: most in a sample (samples) | gangs stuck partial | partial at the end | bind spread of a gang: p50, p99, max | CPU |")
		fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|")
		total := o.gangs * o.gangSize
		for _, g := range r.gangs {
			all := seconds(g.allBound)
			if g.allBound == 0 {
				all = fmt.Sprintf("not within %s", o.timeout)
			}
			fmt.Fprintf(out, "| %s | %s | %s | %d of %d | %d (%d) | %d | %d | %s, %s, %s | %s |\n", g.name, seconds(g.created), all, g.bound, total,
				g.maxPartial, g.samples, g.stuck, g.atEnd,
				millis(harness.Percentile(g.spreads, 0.5)), millis(harness.Percentile(g.spreads, 0.99)), millis(harness.Percentile(g.spreads, 1)), seconds(g.cpu))
		}
		if len(r.gangs) > 1 && r.gangs[0].allBound > 0 && r.gangs[1].allBound > 0 {
			fmt.Fprintf(out, "\nRatio of the time until all are bound, %s to %s: **%.2f** (above 1: T9k is faster; target: faster, "+
				"and 0 pods in partial gangs).\n\n", r.gangs[1].name, r.gangs[0].name, ratio(r.gangs[1].allBound, r.gangs[0].allBound))
		} else {
			fmt.Fprintln(out, "\nTarget: faster than coscheduling, and 0 pods in partial gangs.")
			fmt.Fprintln(out)
		}
	}

	if p := r.preemption; p != nil {
		fmt.Fprintf(out, "**Preemption, %d queues.** %d pods of %s from %d low-priority queues (priorities 1 to %d) fill "+
			"every GPU; then %d pods of %s of a queue of priority 100 are created one at a time, each once the "+
			"previous is bound. Decision: from a preemptor's creation to its victim marked for deletion or itself "+
			"nominated to a node, whichever the watch sees first; bound: to the preemptor bound, once kwok has finished "+
			"the victim's deletion.\n\n",
			o.queues, p.filled, gpus(o.fillGPUs), o.queues-1, min(o.queues-1, 50), o.preemptions, gpus(o.fillGPUs))
		fmt.Fprintln(out, "| scheduler | preemptions | decision p50 | decision p99 | decision max | bound p50 | bound p99 | not bound within 1 min |")
		fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|")
		fmt.Fprintf(out, "| %s | %d | %s | %s | %s | %s | %s | %d |\n", p.name, len(p.decided),
			millis(harness.Percentile(p.decided, 0.5)), millis(harness.Percentile(p.decided, 0.99)), millis(harness.Percentile(p.decided, 1)),
			millis(harness.Percentile(p.bound, 0.5)), millis(harness.Percentile(p.bound, 0.99)), p.missed)
	}
}

// gpus says n GPUs in words.
func gpus(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func millis(d time.Duration) string {
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

func ratio(theirs, ours time.Duration) float64 { return theirs.Seconds() / ours.Seconds() }

func metaName(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// meanRate is the mean pods per second of the runs of scheduler name.
func meanRate(runs []throughputResult, name string) float64 {
	var sum float64
	n := 0
	for _, t := range runs {
		if t.name == name {
			sum += t.rate()
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}
