package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/test/harness"
)

// throughputResult is one scheduler's run of plain pods.
type throughputResult struct {
	name string
	// round is the round of the measurement, from 1.
	round int
	// bound is the number of pods bound within the timeout.
	bound int
	// firstToLast is from the first pod seen bound to the last; fromStart,
	// from the scheduler's start to the last.
	firstToLast, fromStart time.Duration
	// cpu is the scheduler's CPU time from its start to the last bind.
	cpu time.Duration
}

// rate is pods bound per second from the first bind to the last.
func (r throughputResult) rate() float64 {
	if r.bound < 2 || r.firstToLast <= 0 {
		return 0
	}
	return float64(r.bound-1) / r.firstToLast.Seconds()
}

// measureThroughput creates o.pods pending pods for s, then starts s and
// times it until all are bound; the pods are deleted afterwards.
func measureThroughput(ctx context.Context, cl *cluster, s schedulerBin, o options, run string) (res throughputResult, err error) {
	res.name = s.name
	ns := "throughput-" + run
	if err := cl.createNamespace(ctx, ns); err != nil {
		return res, err
	}
	w, err := watchPods(ctx, cl.cs, ns, "")
	if err != nil {
		return res, err
	}
	defer w.stop()
	defer func() { err = errors.Join(err, cl.deletePods(context.WithoutCancel(ctx), ns)) }()
	var labels map[string]string
	if s.profile == schedv1beta1.SchedulerName {
		labels = map[string]string{schedv1beta1.QueueLabel: openQueue}
	}
	created := time.Now()
	if err := parallel(ctx, o.pods, 32, func(ctx context.Context, i int) error {
		return cl.c.Create(ctx, pod(ns, podName("p", i), s.profile, o.podGPUs, labels))
	}); err != nil {
		return res, fmt.Errorf("creating pods: %w", err)
	}
	fmt.Fprintf(os.Stderr, "bench scheduler: %s: %d pods created in %.1f s\n", s.name, o.pods, time.Since(created).Seconds())
	start := time.Now()
	p, err := s.start(cl, o.qps, "throughput-"+run)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, p.Stop()) }()
	all := waitFor(ctx, o.timeout, func() bool { return w.boundCount() >= o.pods || p.Exited() })
	res.cpu, _ = harness.ProcessCPU(p.Pid())
	res.bound = w.boundCount()
	first, last := w.bindTimes()
	res.firstToLast, res.fromStart = last.Sub(first), last.Sub(start)
	if p.Exited() {
		return res, fmt.Errorf("%s exited:\n%s", s.name, p.Log())
	}
	fmt.Fprintf(os.Stderr, "bench scheduler: %s: %d of %d bound, %.0f pods/s (all bound: %v)\n", s.name, res.bound, o.pods, res.rate(), all)
	return res, nil
}

// gangResult is one scheduler's run of gangs.
type gangResult struct {
	name string
	// bound is the number of pods bound within the timeout; allBound, from
	// the first PodGroup created to the last pod bound, zero if not all
	// were bound.
	bound    int
	allBound time.Duration
	// created is how long the bench took to create the gangs, which bounds
	// allBound from below.
	created time.Duration
	// maxPartial is the most pods seen bound in gangs with fewer than all
	// their pods bound in one sample (binds in flight included); stuck,
	// the number of gangs seen partial for at least stuckAfter; atEnd, the
	// pods bound in partial gangs when the run ended.
	maxPartial, stuck, atEnd int
	samples                  int
	// spreads are, per gang wholly bound, from its first pod bound to its
	// last: how long it was partly bound.
	spreads []time.Duration
	cpu     time.Duration
}

// stuckAfter is how long a gang must stay partly bound to count as stuck
// rather than binding.
const stuckAfter = 2 * time.Second

// measureGangs starts s, creates o.gangs PodGroups of o.gangSize pods at
// once and times s until all are bound, sampling the gangs partly bound.
func measureGangs(ctx context.Context, cl *cluster, s schedulerBin, kind gangKind, o options, run string) (res gangResult, err error) {
	res.name = s.name
	ns := "gangs-" + run
	if err := cl.createNamespace(ctx, ns); err != nil {
		return res, err
	}
	w, err := watchPods(ctx, cl.cs, ns, kind.groupLabel)
	if err != nil {
		return res, err
	}
	defer w.stop()
	defer func() { err = errors.Join(err, cl.deletePods(context.WithoutCancel(ctx), ns)) }()
	p, err := s.start(cl, o.qps, "gangs-"+run)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, p.Stop()) }()
	cpu0, _ := harness.ProcessCPU(p.Pid())

	total := o.gangs * o.gangSize
	// sample records the gangs partly bound every 250ms until done.
	done := make(chan struct{})
	sampled := make(chan struct{})
	partialSince := map[string]time.Time{}
	stuck := map[string]bool{}
	sample := func() {
		now := time.Now()
		partial := 0
		seen := map[string]bool{}
		for g, n := range w.boundByGroup() {
			if n >= o.gangSize {
				continue
			}
			partial += n
			seen[g] = true
			if _, ok := partialSince[g]; !ok {
				partialSince[g] = now
			} else if now.Sub(partialSince[g]) >= stuckAfter {
				stuck[g] = true
			}
		}
		for g := range partialSince {
			if !seen[g] {
				delete(partialSince, g)
			}
		}
		res.maxPartial = max(res.maxPartial, partial)
		res.atEnd = partial
		res.samples++
	}
	go func() {
		defer close(sampled)
		for {
			select {
			case <-done:
				sample()
				return
			case <-time.After(250 * time.Millisecond):
				sample()
			}
		}
	}()

	start := time.Now()
	err = parallel(ctx, o.gangs, 16, func(ctx context.Context, g int) error {
		name := fmt.Sprintf("gang-%04d", g)
		if err := cl.c.Create(ctx, kind.podGroup(ns, name, o.gangSize)); err != nil {
			return err
		}
		for i := range o.gangSize {
			if err := cl.c.Create(ctx, pod(ns, fmt.Sprintf("%s-%d", name, i), s.profile, o.gangGPUs, map[string]string{kind.groupLabel: name})); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		close(done)
		<-sampled
		return res, fmt.Errorf("creating gangs: %w", err)
	}
	res.created = time.Since(start)
	fmt.Fprintf(os.Stderr, "bench scheduler: %s: %d gangs created in %.1f s\n", s.name, o.gangs, res.created.Seconds())
	all := waitFor(ctx, o.timeout, func() bool { return w.boundCount() >= total || p.Exited() })
	close(done)
	<-sampled
	cpu1, _ := harness.ProcessCPU(p.Pid())
	res.cpu = cpu1 - cpu0
	res.stuck = len(stuck)
	res.bound = w.boundCount()
	res.spreads = w.groupSpreads(o.gangSize)
	if all && res.bound >= total {
		_, last := w.bindTimes()
		res.allBound = last.Sub(start)
	}
	if p.Exited() {
		return res, fmt.Errorf("%s exited:\n%s", s.name, p.Log())
	}
	fmt.Fprintf(os.Stderr, "bench scheduler: %s: %d of %d gang pods bound after %.1f s, at most %d in partial gangs, %d gangs stuck partial\n",
		s.name, res.bound, total, time.Since(start).Seconds(), res.maxPartial, res.stuck)
	return res, nil
}

// preemptionResult is the T9k Scheduler's preemption latencies.
type preemptionResult struct {
	name string
	// filled is the number of low-priority pods bound before the probes.
	filled int
	// decided is from a preemptor's creation to its victim marked for
	// deletion or the preemptor nominated to a node, whichever came first;
	// bound, to the preemptor bound.
	decided, bound []time.Duration
	// missed counts preemptors not bound within the probe timeout.
	missed int
}

// probeTimeout bounds the wait for one preemptor.
const probeTimeout = time.Minute

// measurePreemption fills the nodes with pods of o.queues-1 low-priority
// queues, then creates pods of one high-priority queue one at a time and
// times until each has preempted a victim and is bound.
func measurePreemption(ctx context.Context, cl *cluster, s schedulerBin, o options) (res preemptionResult, err error) {
	res.name = s.name
	ns := "preemption"
	if err := cl.createNamespace(ctx, ns); err != nil {
		return res, err
	}
	low := make([]string, o.queues-1)
	for i := range low {
		low[i] = fmt.Sprintf("low-%02d", i)
		// Low queues of priorities 1 to 50, so that the preemptor's queue
		// weighs victims of several priorities.
		if err := queue(ctx, cl.c, low[i], int32(1+i%50)); err != nil {
			return res, err
		}
	}
	const high = "high"
	if err := queue(ctx, cl.c, high, 100); err != nil {
		return res, err
	}
	w, err := watchPods(ctx, cl.cs, ns, "")
	if err != nil {
		return res, err
	}
	defer w.stop()
	defer func() { err = errors.Join(err, cl.deletePods(context.WithoutCancel(ctx), ns)) }()
	p, err := s.start(cl, o.qps, "preemption")
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, p.Stop()) }()

	fill := o.nodes * o.gpusPerNode / o.fillGPUs
	start := time.Now()
	if err := parallel(ctx, fill, 32, func(ctx context.Context, i int) error {
		q := low[i%len(low)]
		return cl.c.Create(ctx, pod(ns, podName("fill", i), s.profile, o.fillGPUs, map[string]string{schedv1beta1.QueueLabel: q}))
	}); err != nil {
		return res, fmt.Errorf("creating the low-priority pods: %w", err)
	}
	if !waitFor(ctx, o.timeout, func() bool { return w.boundCount() >= fill || p.Exited() }) || p.Exited() {
		return res, fmt.Errorf("%d of %d low-priority pods bound after %s:\n%s", w.boundCount(), fill, o.timeout, p.Log())
	}
	res.filled = fill
	fmt.Fprintf(os.Stderr, "bench scheduler: %s: %d low-priority pods of %d queues bound in %.1f s\n", s.name, fill, len(low), time.Since(start).Seconds())

	for i := range o.preemptions {
		name := podName("urgent", i)
		t := time.Now()
		if err := cl.c.Create(ctx, pod(ns, name, s.profile, o.fillGPUs, map[string]string{schedv1beta1.QueueLabel: high})); err != nil {
			return res, err
		}
		var victim, nominated, bound time.Time
		waitFor(ctx, probeTimeout, func() bool {
			bound, nominated, _ = w.timesOf(name)
			return !bound.IsZero() || p.Exited()
		})
		if p.Exited() {
			return res, fmt.Errorf("%s exited:\n%s", s.name, p.Log())
		}
		victim, _ = w.firstDeletedSince(t)
		if bound.IsZero() {
			res.missed++
			continue
		}
		decided := bound
		for _, d := range []time.Time{victim, nominated} {
			if !d.IsZero() && d.Before(decided) {
				decided = d
			}
		}
		res.decided = append(res.decided, decided.Sub(t))
		res.bound = append(res.bound, bound.Sub(t))
	}
	fmt.Fprintf(os.Stderr, "bench scheduler: %s: %d preemptions, decision p50 %s p99 %s\n", s.name, len(res.decided),
		harness.Percentile(res.decided, 0.5), harness.Percentile(res.decided, 0.99))
	return res, nil
}
