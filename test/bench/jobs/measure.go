package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/test/harness"
)

// benchNamespace holds the jobs.
const benchNamespace = "bench"

// result is what the bench measured of one controller.
type result struct {
	name string
	// workers is the number of jobs it reconciles at once.
	workers int
	// created is how long creating the jobs took the bench; exist, until
	// every pod and Service of them existed.
	created, exist time.Duration
	// cpuExist is the controller's CPU time from the first job created to
	// the last object existing; cpuIdle, to the controller being idle.
	cpuExist, cpuIdle time.Duration
	// idle says whether the controller became idle within the wait.
	idle bool
	// peakRSS is the controller's VmHWM in bytes at the end.
	peakRSS uint64
	// touched are the reconcile times of one job updated over and over
	// while the others exist.
	touched histogram
	// probes are how long each job created one at a time after the others
	// took to get its pods and Services.
	probes []time.Duration
}

// measure starts a control plane and c, gives c the work and measures it.
func measure(ctx context.Context, c controller, o options) (res result, err error) {
	res.name = c.name()
	dir, err := os.MkdirTemp("", "bench-jobs-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	cp, err := harness.NewControlPlane()
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, cp.Stop()) }()
	// The API server waits for open watches when it stops: end the bench's
	// own first.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r, err := c.start(ctx, cp, dir)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, r.proc.Stop()) }()
	pid := r.proc.Pid()

	// The bench's own client is not rate limited: creating the jobs at
	// once is the point.
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1
	cl, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
	if err != nil {
		return res, err
	}
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}); err != nil {
		return res, err
	}
	w, err := watchObjects(ctx, cfg, cp.Scheme, benchNamespace)
	if err != nil {
		return res, err
	}
	mfs, err := scrape(ctx, r.metrics)
	if err != nil {
		return res, err
	}
	res.workers = workerCount(mfs, r.reconciler)

	names := make([]string, o.jobs)
	for i := range names {
		names[i] = fmt.Sprintf("job-%04d", i)
	}
	cpu0, err := harness.ProcessCPU(pid)
	if err != nil {
		return res, err
	}
	start := time.Now()
	if err := createJobs(ctx, cl, c, names); err != nil {
		return res, err
	}
	res.created = time.Since(start)
	want := o.jobs * replicasPerJob
	if err := w.waitFor(ctx, r.proc, o.timeout, fmt.Sprintf("%d pods and Services", want), func() bool {
		return w.count(podKind) >= want && w.count(serviceKind) >= want
	}); err != nil {
		return res, err
	}
	res.exist = time.Since(start)
	if res.cpuExist, err = cpuSince(pid, cpu0); err != nil {
		return res, err
	}
	if res.idle, err = waitIdle(ctx, r, o.idleWait); err != nil {
		return res, err
	}
	if res.cpuIdle, err = cpuSince(pid, cpu0); err != nil {
		return res, err
	}

	if res.touched, err = timeReconciles(ctx, r, cl, c.job(benchNamespace, names[0]), o); err != nil {
		return res, err
	}
	for i := range o.probes {
		d, err := timeOneJob(ctx, r, w, cl, c, fmt.Sprintf("probe-%02d", i))
		if err != nil {
			return res, err
		}
		res.probes = append(res.probes, d)
	}
	m, err := harness.ProcessMemory(pid)
	if err != nil {
		return res, err
	}
	res.peakRSS = m.Peak
	return res, nil
}

// createJobs creates a job of c per name, several at a time.
func createJobs(ctx context.Context, cl client.Client, c controller, names []string) error {
	const parallel = 16
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	next := make(chan string)
	for range parallel {
		wg.Go(func() {
			for name := range next {
				if err := cl.Create(ctx, c.job(benchNamespace, name)); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("creating job %s: %w", name, err))
					mu.Unlock()
				}
			}
		})
	}
	for _, n := range names {
		next <- n
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// cpuSince returns the CPU time process pid used since it had used before.
func cpuSince(pid int, before time.Duration) (time.Duration, error) {
	now, err := harness.ProcessCPU(pid)
	return now - before, err
}

// idleQuiet is how long a controller must finish no reconcile, with no
// worker busy, to count as idle.
const idleQuiet = 3 * time.Second

// waitIdle waits until the controller is idle, or limit passes; it reports
// which.
func waitIdle(ctx context.Context, r *running, limit time.Duration) (bool, error) {
	deadline := time.Now().Add(limit)
	last, lastChange := -1.0, time.Now()
	for {
		mfs, err := scrape(ctx, r.metrics)
		if err != nil {
			return false, err
		}
		n := reconcileCount(mfs, r.reconciler)
		switch {
		case n != last || activeWorkers(mfs, r.reconciler) > 0:
			last, lastChange = n, time.Now()
		case time.Since(lastChange) >= idleQuiet:
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// touchAnnotation is the annotation the bench changes to have a job
// reconciled.
const touchAnnotation = "bench.accelstack.dev/touch"

// timeReconciles updates one job o.touches times, a little apart so that
// each update is a reconcile of its own, and returns the reconcile times the
// controller observed meanwhile.
func timeReconciles(ctx context.Context, r *running, cl client.Client, job client.Object, o options) (histogram, error) {
	before, err := scrape(ctx, r.metrics)
	if err != nil {
		return histogram{}, err
	}
	for i := range o.touches {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"%d"}}}`, touchAnnotation, i)
		if err := cl.Patch(ctx, job, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return histogram{}, err
		}
		select {
		case <-ctx.Done():
			return histogram{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, err := waitIdle(ctx, r, o.idleWait); err != nil {
		return histogram{}, err
	}
	after, err := scrape(ctx, r.metrics)
	if err != nil {
		return histogram{}, err
	}
	return reconcileHistogram(after, r.reconciler).minus(reconcileHistogram(before, r.reconciler)), nil
}

// timeOneJob creates one job and returns how long it took until its pods and
// Services existed.
func timeOneJob(ctx context.Context, r *running, w *objectWatch, cl client.Client, c controller, name string) (time.Duration, error) {
	start := time.Now()
	if err := cl.Create(ctx, c.job(benchNamespace, name)); err != nil {
		return 0, err
	}
	replicas := replicaNames(name)
	if err := w.waitFor(ctx, r.proc, time.Minute, "the objects of "+name, func() bool { return w.all(replicas) }); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
