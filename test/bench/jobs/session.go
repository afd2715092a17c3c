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
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/test/harness"
)

// benchNamespace holds the jobs.
const benchNamespace = "bench"

// session is one controller started against a fresh control plane of its
// own, with the bench's client and its watch of benchNamespace.
type session struct {
	c controller
	r *running
	// cl is the bench's client; it is not rate limited: creating the jobs
	// at once is the point.
	cl client.Client
	w  *objectWatch
	// workers is the number of jobs the controller reconciles at once.
	workers int
}

// withSession starts a control plane and c, runs fn with them, then stops
// both.
func withSession(ctx context.Context, c controller, fn func(ctx context.Context, s *session) error) (err error) {
	dir, err := os.MkdirTemp("", "bench-jobs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cp, err := harness.NewControlPlane()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, cp.Stop()) }()
	// The API server waits for open watches when it stops: end the bench's
	// own first.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r, err := c.start(ctx, cp, dir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.proc.Stop()) }()

	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1
	cl, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
	if err != nil {
		return err
	}
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}); err != nil {
		return err
	}
	w, err := watchObjects(ctx, cfg, cp.Scheme, benchNamespace)
	if err != nil {
		return err
	}
	mfs, err := scrape(ctx, r.metrics)
	if err != nil {
		return err
	}
	return fn(ctx, &session{c: c, r: r, cl: cl, w: w, workers: workerCount(mfs, r.reconciler)})
}

// jobNames are the names of n jobs: job-0000 and on.
func jobNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("job-%04d", i)
	}
	return names
}

// createJobs creates a job per name, several at a time.
func (s *session) createJobs(ctx context.Context, names []string) error {
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
				if err := s.cl.Create(ctx, s.c.job(benchNamespace, name)); err != nil {
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

// usage is the controller's CPU time from the first job created to the
// work being done (cpuDone), and to the controller being idle (cpuIdle).
type usage struct {
	cpuDone, cpuIdle time.Duration
	// idle says whether the controller became idle within the wait.
	idle bool
}

// cpuNow returns the CPU time the controller has used so far.
func (s *session) cpuNow() (time.Duration, error) { return harness.ProcessCPU(s.r.proc.Pid()) }

// settle returns the controller's usage once the work is done: its CPU
// time since it had used cpu0, now and once it is idle (or idleWait
// passed).
func (s *session) settle(ctx context.Context, cpu0, idleWait time.Duration) (usage, error) {
	var u usage
	now, err := s.cpuNow()
	if err != nil {
		return u, err
	}
	u.cpuDone = now - cpu0
	if u.idle, err = waitIdle(ctx, s.r, idleWait); err != nil {
		return u, err
	}
	now, err = s.cpuNow()
	u.cpuIdle = now - cpu0
	return u, err
}

// peakRSS returns the controller's peak RSS (VmHWM) in bytes.
func (s *session) peakRSS() (uint64, error) {
	m, err := harness.ProcessMemory(s.r.proc.Pid())
	return m.Peak, err
}
