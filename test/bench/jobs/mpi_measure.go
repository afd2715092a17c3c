package main

import (
	"context"
	"fmt"
	"time"
)

// mpiResult is what the bench measured of one controller's MPI jobs.
type mpiResult struct {
	controllerRun
	// created is how long creating the jobs took the bench; workersExist
	// and launchersExist, until every worker pod, and every launcher pod,
	// existed.
	created, workersExist, launchersExist time.Duration
	// lags are, per job whose launcher came after its workers were Ready,
	// the time from its last worker marked Ready to its launcher existing.
	lags []time.Duration
	// early is the number of jobs whose launcher existed before their
	// workers were all Ready.
	early int
	// usage is the controller's CPU time until every pod existed and every
	// worker was Ready, and until it was idle.
	usage
	// peakRSS is the controller's VmHWM in bytes at the end.
	peakRSS uint64
}

func (r mpiResult) summary() string {
	return fmt.Sprintf("all launchers exist after %s (%s CPU), peak RSS %.1f MiB", seconds(r.launchersExist), seconds(r.cpuDone), mib(r.peakRSS))
}

// measureMPI starts a control plane and c, gives c o.mpiJobs MPI jobs of
// o.mpiWorkers workers while playing the kubelet for their workers, and
// measures it.
func measureMPI(ctx context.Context, c controller, o options) (mpiResult, error) {
	res := mpiResult{controllerRun: controllerRun{name: c.name()}}
	err := withSession(ctx, c, func(ctx context.Context, s *session) error {
		res.workers = s.workers
		k := startKubelet(ctx, s.cl)
		s.w.onNewPod(k.newPod)
		names := jobNames(o.mpiJobs)
		var workers, launchers []string
		for _, n := range names {
			workers = append(workers, mpiWorkerNames(n, o.mpiWorkers)...)
			launchers = append(launchers, launcherName(n))
		}
		cpu0, err := s.cpuNow()
		if err != nil {
			return err
		}
		start := time.Now()
		if err := s.createJobs(ctx, names); err != nil {
			return err
		}
		res.created = time.Since(start)
		what := fmt.Sprintf("%d worker pods Ready and %d launchers", len(workers), len(launchers))
		if err := s.w.waitFor(ctx, s.r.proc, o.timeout, what, func() bool {
			return k.err() != nil || s.w.allOf(podKind, launchers) && k.allReady(workers)
		}); err != nil {
			return err
		}
		if err := k.err(); err != nil {
			return err
		}
		if res.usage, err = s.settle(ctx, cpu0, o.idleWait); err != nil {
			return err
		}
		res.workersExist = s.w.lastSeen(podKind, workers).Sub(start)
		res.launchersExist = s.w.lastSeen(podKind, launchers).Sub(start)
		for _, n := range names {
			var ready time.Time
			for _, w := range mpiWorkerNames(n, o.mpiWorkers) {
				if t, _ := k.readyAt(w); t.After(ready) {
					ready = t
				}
			}
			launched, _ := s.w.seenAt(podKind, launcherName(n))
			if launched.Before(ready) {
				res.early++
				continue
			}
			res.lags = append(res.lags, launched.Sub(ready))
		}
		res.peakRSS, err = s.peakRSS()
		return err
	})
	return res, err
}
