package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pytorchResult is what the bench measured of one controller's PyTorch jobs.
type pytorchResult struct {
	controllerRun
	// created is how long creating the jobs took the bench; exist, until
	// every pod and Service of them existed.
	created, exist time.Duration
	// usage is the controller's CPU time until every pod and Service
	// existed, and until it was idle.
	usage
	// peakRSS is the controller's VmHWM in bytes at the end.
	peakRSS uint64
	// touched are the reconcile times of one job updated over and over
	// while the others exist.
	touched histogram
	// probes are how long each job created one at a time after the others
	// took to get its pods and Services.
	probes []time.Duration
}

func (r pytorchResult) summary() string {
	return fmt.Sprintf("all exist after %s (%s CPU), peak RSS %.1f MiB", seconds(r.exist), seconds(r.cpuDone), mib(r.peakRSS))
}

// measurePyTorch starts a control plane and c, gives c o.jobs PyTorch jobs
// and measures it.
func measurePyTorch(ctx context.Context, c controller, o options) (pytorchResult, error) {
	res := pytorchResult{controllerRun: controllerRun{name: c.name()}}
	err := withSession(ctx, c, func(ctx context.Context, s *session) error {
		res.workers = s.workers
		names := jobNames(o.jobs)
		cpu0, err := s.cpuNow()
		if err != nil {
			return err
		}
		start := time.Now()
		if err := s.createJobs(ctx, names); err != nil {
			return err
		}
		res.created = time.Since(start)
		want := o.jobs * replicasPerJob
		if err := s.w.waitFor(ctx, s.r.proc, o.timeout, fmt.Sprintf("%d pods and Services", want), func() bool {
			return s.w.count(podKind) >= want && s.w.count(serviceKind) >= want
		}); err != nil {
			return err
		}
		res.exist = time.Since(start)
		if res.usage, err = s.settle(ctx, cpu0, o.idleWait); err != nil {
			return err
		}
		if res.touched, err = timeReconciles(ctx, s.r, s.cl, c.job(benchNamespace, names[0]), o); err != nil {
			return err
		}
		for i := range o.probes {
			d, err := timeOneJob(ctx, s, fmt.Sprintf("probe-%02d", i))
			if err != nil {
				return err
			}
			res.probes = append(res.probes, d)
		}
		res.peakRSS, err = s.peakRSS()
		return err
	})
	return res, err
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

// timeOneJob creates one PyTorch job and returns how long it took until its
// pods and Services existed.
func timeOneJob(ctx context.Context, s *session, name string) (time.Duration, error) {
	start := time.Now()
	if err := s.cl.Create(ctx, s.c.job(benchNamespace, name)); err != nil {
		return 0, err
	}
	replicas := replicaNames(name)
	if err := s.w.waitFor(ctx, s.r.proc, time.Minute, "the objects of "+name, func() bool { return s.w.all(replicas) }); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
