// Command jobs benchmarks the PyTorchTrainingJob controller of cmd/controllers
// against the Kubeflow training operator's PyTorchJob controller.
//
// Each controller runs as its own process against a fresh control plane of
// its own (envtest: a real kube-apiserver and etcd with the project's CRDs
// and the training operator's PyTorchJob CRD, no kubelet), and is given the
// same work: -jobs jobs of 4 replicas (1 master, 3 workers) created at once.
// For each it measures the seconds until every pod and Service of those jobs
// exists, the controller's CPU time until then and until it is idle again,
// its peak RSS (VmHWM), the reconcile time of one job while all the others
// exist (from the controller-runtime reconcile histogram on /metrics), and
// how long one more job takes to get its pods and Services.
//
// The training operator is the binary make bench-tools builds from the Go
// module proxy; its CRD comes from the source of the module version the
// binary was built from. It runs with only the PyTorchJob controller and no
// gang scheduling, once with its defaults and once with as many workers as
// ours and no client-side rate limit.
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
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// options are the bench's flags.
type options struct {
	// jobs is the number of jobs created at once.
	jobs int
	// probes is the number of jobs created one at a time afterwards.
	probes int
	// touches is the number of reconciles of one job timed.
	touches int
	// timeout bounds the wait for each controller's objects.
	timeout time.Duration
	// idleWait bounds the wait for a controller to become idle.
	idleWait time.Duration
	// kubeflow includes the training operator.
	kubeflow bool
}

func main() {
	var o options
	flag.IntVar(&o.jobs, "jobs", 500, "Jobs (of 1 master and 3 workers) created at once.")
	flag.IntVar(&o.probes, "probes", 10, "Jobs created one at a time once the others exist, timed until their pods and Services exist.")
	flag.IntVar(&o.touches, "touches", 100, "Updates of one job whose reconciles are timed once the others exist.")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "How long each controller may take to create every pod and Service.")
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
	var to *trainingOperator
	if o.kubeflow {
		var err error
		if to, err = findTrainingOperator(); err != nil {
			return err
		}
	}
	ours, err := measureOne(ctx, accelstack{}, o)
	if err != nil {
		return err
	}
	results := []result{ours}
	if to != nil {
		// The training operator runs as shipped, then with accelstack's
		// number of workers and, as accelstack, no client rate limit.
		for _, c := range []controller{to.asShipped(), to.matched(ours.workers)} {
			r, err := measureOne(ctx, c, o)
			if err != nil {
				return err
			}
			results = append(results, r)
		}
	}
	report(os.Stdout, o, results)
	return nil
}

// measureOne measures c, saying on standard error what it does.
func measureOne(ctx context.Context, c controller, o options) (result, error) {
	fmt.Fprintf(os.Stderr, "bench jobs: %s: %d jobs\n", c.name(), o.jobs)
	r, err := measure(ctx, c, o)
	if err != nil {
		return r, fmt.Errorf("%s: %w", c.name(), err)
	}
	fmt.Fprintf(os.Stderr, "bench jobs: %s: all exist after %s (%s CPU), peak RSS %.1f MiB\n",
		c.name(), seconds(r.exist), seconds(r.cpuExist), mib(r.peakRSS))
	return r, nil
}
