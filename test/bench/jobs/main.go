// Command jobs benchmarks the job controllers of cmd/controllers against
// the Kubeflow training operator's: PyTorchTrainingJob against PyTorchJob,
// and MPIJob against the training operator's MPIJob.
//
// Each controller runs as its own process against a fresh control plane of
// its own (envtest: a real kube-apiserver and etcd with the project's CRDs
// and the training operator's CRD of the kind, no kubelet), and is given the
// same work, jobs created at once:
//
//   - PyTorch (-jobs): jobs of 4 replicas (1 master, 3 workers). For each
//     controller it measures the seconds until every pod and Service of
//     those jobs exists, the controller's CPU time until then and until it
//     is idle again, its peak RSS (VmHWM), the reconcile time of one job
//     while all the others exist (from the controller-runtime reconcile
//     histogram on /metrics), and how long one more job takes to get its
//     pods and Services.
//   - MPI (-mpi-jobs, -mpi-workers): jobs of a launcher and 8 workers. The
//     bench plays the kubelet: it marks each worker pod Running and Ready as
//     soon as it sees it. It measures the seconds until every worker and
//     every launcher pod exists, per job the time from its last worker
//     marked Ready to its launcher existing, the controller's CPU time until
//     every pod exists and every worker is Ready and until it is idle again,
//     and its peak RSS.
//
// The training operator is the binary make bench-tools builds from the Go
// module proxy; its CRDs come from the source of the module version the
// binary was built from. It runs with only the controller of the kind
// measured and no gang scheduling, once with its defaults and once with as
// many workers as ours and no client-side rate limit.
//
// It reports and asserts nothing: the markdown it prints is what make bench
// writes into docs/benchmarks.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// options are the bench's flags.
type options struct {
	// measure names the measurements to run.
	measure string
	// jobs is the number of PyTorch jobs created at once.
	jobs int
	// probes is the number of PyTorch jobs created one at a time afterwards.
	probes int
	// touches is the number of reconciles of one PyTorch job timed.
	touches int
	// mpiJobs is the number of MPI jobs created at once, of mpiWorkers
	// workers each.
	mpiJobs, mpiWorkers int
	// timeout bounds the wait for each controller's objects.
	timeout time.Duration
	// idleWait bounds the wait for a controller to become idle.
	idleWait time.Duration
	// kubeflow includes the training operator.
	kubeflow bool
}

// The measurements -measure names.
const (
	pytorchMeasurement = "pytorch"
	mpiMeasurement     = "mpi"
)

// runs reports whether the measurement named m is to run.
func (o options) runs(m string) bool { return slices.Contains(strings.Split(o.measure, ","), m) }

func main() {
	var o options
	flag.StringVar(&o.measure, "measure", pytorchMeasurement+","+mpiMeasurement, "Measurements to run, comma-separated: "+pytorchMeasurement+", "+mpiMeasurement+".")
	flag.IntVar(&o.jobs, "jobs", 500, "PyTorch jobs (of 1 master and 3 workers) created at once.")
	flag.IntVar(&o.probes, "probes", 10, "PyTorch jobs created one at a time once the others exist, timed until their pods and Services exist.")
	flag.IntVar(&o.touches, "touches", 100, "Updates of one PyTorch job whose reconciles are timed once the others exist.")
	flag.IntVar(&o.mpiJobs, "mpi-jobs", 200, "MPI jobs created at once.")
	flag.IntVar(&o.mpiWorkers, "mpi-workers", 8, "Workers of each MPI job.")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "How long each controller may take to create every pod (and Service).")
	flag.DurationVar(&o.idleWait, "idle-wait", 2*time.Minute, "How long to wait for a controller to stop reconciling.")
	flag.BoolVar(&o.kubeflow, "kubeflow", true, "Also measure the Kubeflow training operator (make bench-tools builds it).")
	flag.Parse()
	ctrl.SetLogger(logr.Discard()) // the bench's watches log nothing worth reading
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench jobs:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	for _, m := range strings.Split(o.measure, ",") {
		if m != pytorchMeasurement && m != mpiMeasurement {
			return fmt.Errorf("-measure: no measurement %q", m)
		}
	}
	var to *trainingOperator
	if o.kubeflow {
		var err error
		if to, err = findTrainingOperator(); err != nil {
			return err
		}
	}
	if o.runs(pytorchMeasurement) {
		results, err := measureAll(ctx, to, pytorchWorkload, o.jobs, func(ctx context.Context, c controller) (pytorchResult, error) {
			return measurePyTorch(ctx, c, o)
		})
		if err != nil {
			return err
		}
		report(os.Stdout, o, results)
	}
	if o.runs(mpiMeasurement) {
		results, err := measureAll(ctx, to, mpiWorkload(o.mpiWorkers), o.mpiJobs, func(ctx context.Context, c controller) (mpiResult, error) {
			return measureMPI(ctx, c, o)
		})
		if err != nil {
			return err
		}
		if o.runs(pytorchMeasurement) {
			fmt.Fprintln(os.Stdout)
		}
		reportMPI(os.Stdout, o, results)
	}
	return nil
}

// controllerRun is what every result says of the controller it is of.
type controllerRun struct {
	name string
	// workers is the number of jobs it reconciles at once.
	workers int
}

func (c controllerRun) controller() controllerRun { return c }

// measured is the result of a measurement.
type measured interface {
	controller() controllerRun
	// summary is a line of the figures, for standard error.
	summary() string
}

// measureAll measures accelstack's controller of w with measure, then, if
// to is set, the training operator's: as shipped, then with accelstack's
// number of workers and, as accelstack, no client rate limit.
func measureAll[R measured](ctx context.Context, to *trainingOperator, w workload, jobs int, measure func(context.Context, controller) (R, error)) ([]R, error) {
	ours, err := measureOne(ctx, accelstack{w: w}, w, jobs, measure)
	if err != nil || to == nil {
		return []R{ours}, err
	}
	results := []R{ours}
	for _, c := range []controller{to.asShipped(w), to.matched(w, ours.controller().workers)} {
		r, err := measureOne(ctx, c, w, jobs, measure)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

// measureOne measures c, saying on standard error what it does.
func measureOne[R measured](ctx context.Context, c controller, w workload, jobs int, measure func(context.Context, controller) (R, error)) (R, error) {
	fmt.Fprintf(os.Stderr, "bench jobs: %s: %d %s jobs\n", c.name(), jobs, w.title)
	r, err := measure(ctx, c)
	if err != nil {
		return r, fmt.Errorf("%s jobs: %s: %w", w.title, c.name(), err)
	}
	fmt.Fprintf(os.Stderr, "bench jobs: %s: %s\n", c.name(), r.summary())
	return r, nil
}
