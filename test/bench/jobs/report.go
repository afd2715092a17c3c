package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/accelstack/accelstack/test/harness"
)

// report prints the results as markdown: a table of figures, then one of
// each training-operator run's figures divided by accelstack's, the first
// result.
func report(out io.Writer, o options, results []pytorchResult) {
	fmt.Fprintf(out, "%d PyTorch training jobs of 1 master and 3 workers created at once on envtest "+
		"(a real kube-apiserver and etcd, no kubelet), %d CPUs. Each controller runs as a process of its own "+
		"(accelstack: the controllers binary, every controller in it) against a fresh control plane. "+
		"Reconcile of one job: %d updates of one job while the %d others exist, from the controller-runtime "+
		"reconcile histogram (p99 as the bound of its bucket). One more job: %d jobs created one at a time "+
		"afterwards, until their pods and Services exist.\n\n",
		o.jobs, runtime.NumCPU(), o.touches, o.jobs-1, o.probes)
	fmt.Fprintln(out, "| controller | all pods and Services exist | CPU until then | CPU until idle | peak RSS | reconcile of one job: p99, mean (n) | one more job: p50, max |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Fprintf(out, "| %s | %s | %s | %s | %.1f MiB | ≤ %s, %s (%d) | %s, %s |\n",
			r.name, seconds(r.exist), seconds(r.cpuDone), idleCPU(r.usage, o), mib(r.peakRSS),
			bound(r.touched.quantileBound(0.99)), millis(r.touched.mean()), r.touched.count,
			milliseconds(harness.Percentile(r.probes, 0.5)), milliseconds(harness.Percentile(r.probes, 1)))
	}
	if len(results) < 2 {
		return
	}
	ours := results[0]
	fmt.Fprintf(out, "\n| ratio to %s (above 1: %s is faster, leaner) | all exist | CPU until then | CPU until idle | peak RSS |\n", ours.name, ours.name)
	fmt.Fprintln(out, "|---|---|---|---|---|")
	for _, r := range results[1:] {
		fmt.Fprintf(out, "| %s | %.2f | %.2f | %.2f | %.2f |\n", r.name,
			ratio(r.exist, ours.exist), ratio(r.cpuDone, ours.cpuDone), ratio(r.cpuIdle, ours.cpuIdle),
			float64(r.peakRSS)/float64(ours.peakRSS))
	}
	fmt.Fprintln(out, "\nTarget: accelstack at least as fast as the training operator (ratio ≥ 1), in a smaller peak RSS (ratio > 1).")
}

// idleCPU prints the CPU time until idle of u, and whether the controller
// was still busy at the end of the wait.
func idleCPU(u usage, o options) string {
	s := seconds(u.cpuIdle)
	if !u.idle {
		s += fmt.Sprintf(" (busy after %s)", o.idleWait)
	}
	return s
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func milliseconds(d time.Duration) string { return millis(d.Seconds()) }

// millis prints s seconds in milliseconds.
func millis(s float64) string {
	if math.IsNaN(s) {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", s*1000)
}

// bound prints a histogram bucket bound.
func bound(s float64) string {
	if math.IsInf(s, 1) {
		return "∞"
	}
	return millis(s)
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func ratio(theirs, ours time.Duration) float64 { return theirs.Seconds() / ours.Seconds() }

// reportMPI prints the MPI results as markdown: a table of figures, then
// one of each training-operator run's figures divided by accelstack's, the
// first result.
func reportMPI(out io.Writer, o options, results []mpiResult) {
	fmt.Fprintf(out, "%d MPI jobs of a launcher and %d workers created at once on envtest (a real kube-apiserver and etcd), "+
		"%d CPUs. The bench plays the kubelet: it marks each worker pod Running and Ready as soon as its watch sees it. "+
		"Each controller runs as a process of its own against a fresh control plane. Launcher after the workers: per job, "+
		"from its last worker marked Ready to its launcher existing, for the jobs whose launcher came after.\n\n",
		o.mpiJobs, o.mpiWorkers, runtime.NumCPU())
	fmt.Fprintln(out, "| controller | all workers exist | all launchers exist | launcher after the workers: p50, p99 | launchers before their workers were Ready | CPU until all exist, workers Ready | CPU until idle | peak RSS |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		lag := "-"
		if len(r.lags) > 0 {
			lag = milliseconds(harness.Percentile(r.lags, 0.5)) + ", " + milliseconds(harness.Percentile(r.lags, 0.99))
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | %d of %d | %s | %s | %.1f MiB |\n",
			r.name, seconds(r.workersExist), seconds(r.launchersExist), lag, r.early, o.mpiJobs,
			seconds(r.cpuDone), idleCPU(r.usage, o), mib(r.peakRSS))
	}
	if len(results) < 2 {
		return
	}
	ours := results[0]
	fmt.Fprintf(out, "\n| ratio to %s (above 1: %s is faster, leaner) | all workers exist | all launchers exist | CPU until then | CPU until idle | peak RSS |\n", ours.name, ours.name)
	fmt.Fprintln(out, "|---|---|---|---|---|---|")
	for _, r := range results[1:] {
		fmt.Fprintf(out, "| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", r.name,
			ratio(r.workersExist, ours.workersExist), ratio(r.launchersExist, ours.launchersExist), ratio(r.cpuDone, ours.cpuDone), ratio(r.cpuIdle, ours.cpuIdle),
			float64(r.peakRSS)/float64(ours.peakRSS))
	}
	fmt.Fprintln(out, "\nThe training operator creates each job's launcher in the same reconcile as its workers, right after them, "+
		"without waiting for them to be Ready (pkg/controller.v1/mpi, ReconcilePods); accelstack creates it once it has seen "+
		"every worker Ready. The training operator's launcher figures hold no wait for readiness: where its launcher came after "+
		"the workers were Ready, the bench had marked them while the operator was still creating pods. The comparable figures "+
		"are the time until every worker exists, the CPU time and the peak RSS. Besides the pods, the training operator creates "+
		"per job a ConfigMap, ServiceAccount, Role and RoleBinding; accelstack a Secret (an Ed25519 key pair), a ConfigMap and "+
		"a headless Service per worker.")
}
