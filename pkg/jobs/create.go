package jobs

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// createParallelism bounds the pods and Services created at once per job.
const createParallelism = 16

// ensureChildren creates what must exist before the pods: the PodGroup, the
// rank table, the Services; and deletes Services no replica wants.
func (r *Reconciler) ensureChildren(ctx context.Context, job *Job, services []*corev1.Service) error {
	if s := job.Scheduler; s != nil && s.T9kScheduler != nil {
		if err := r.ensurePodGroup(ctx, job); err != nil {
			return err
		}
	}
	if usesAscend(job) {
		if err := r.ensureRankTable(ctx, job); err != nil {
			return err
		}
	}
	have := map[string]*corev1.Service{}
	for _, s := range services {
		have[s.Name] = s
	}
	var want []*corev1.Service
	wanted := map[string]bool{}
	for i := range job.Replicas {
		rep := &job.Replicas[i]
		if !rep.Service {
			continue
		}
		for rank := int32(0); rank < rep.Replicas; rank++ {
			name := rep.PodName(job.Object.GetName(), rank)
			wanted[name] = true
			if have[name] != nil {
				continue
			}
			svc, err := r.newService(job, rep, rank)
			if err != nil {
				return err
			}
			want = append(want, svc)
		}
	}
	errs := parallel(len(want), func(i int) error {
		if err := r.client.Create(ctx, want[i]); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Service %s: %w", want[i].Name, err)
		}
		return nil
	})
	for _, s := range services {
		if !wanted[s.Name] && s.DeletionTimestamp == nil {
			if err := r.client.Delete(ctx, s, client.Preconditions{UID: &s.UID}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				errs = append(errs, fmt.Errorf("deleting Service %s: %w", s.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// errNameTaken means a replica's pod name is held by an object the job does
// not own, which the engine does not watch: the reconcile is retried later.
var errNameTaken = errors.New("a pod name is taken by another object")

// quotaRefusals are the pods a ResourceQuota refused in one reconcile.
type quotaRefusals struct {
	// wanted is the number of pods the reconcile tried to create.
	wanted int
	// refused are the API server's refusals, sorted.
	refused []string
}

// createPods creates the pods of the replicas that have none. A pod the API
// server refuses as invalid fails the job; a name someone else holds is
// waited for (errNameTaken), and so is a Service that still resolves to a
// replaced pod (errStaleAddress); pods a ResourceQuota refuses are
// returned, not as an error, to be tried again later; other errors are
// retried.
func (r *Reconciler) createPods(ctx context.Context, obj client.Object, job *Job, states *States) (quotaRefusals, error) {
	type todo struct {
		rep  *Replica
		rank int32
	}
	var list []todo
	for _, rs := range states.All() {
		if rs.Pod == nil && (rs.State == Missing || rs.State == Restarting) {
			if rep := job.Replica(rs.Type); !waitsForReady(rep, states) {
				list = append(list, todo{rep, rs.Rank})
			}
		}
	}
	if len(list) == 0 {
		return quotaRefusals{}, nil
	}
	var names []string
	for _, td := range list {
		if td.rep.Service {
			names = append(names, td.rep.PodName(obj.GetName(), td.rank))
		}
	}
	held := r.staleAddresses(ctx, job, names)
	if len(held) > 0 {
		kept := list[:0]
		for _, td := range list {
			if !held[td.rep.PodName(obj.GetName(), td.rank)] {
				kept = append(kept, td)
			}
		}
		list = kept
	}
	var (
		mu      sync.Mutex
		notes   = map[string]bool{}
		invalid []string
		taken   bool
		quota   = quotaRefusals{wanted: len(list)}
	)
	errs := parallel(len(list), func(i int) error {
		pod, n, err := newPod(r.kind, job, list[i].rep, list[i].rank, r.scheme)
		if err != nil {
			return err
		}
		mu.Lock()
		for _, s := range n {
			notes[s] = true
		}
		mu.Unlock()
		err = r.client.Create(ctx, pod)
		switch {
		case err == nil:
			r.recorder.Eventf(obj, pod, corev1.EventTypeNormal, EventCreated, "CreatePod", "Created pod %s", pod.Name)
			return nil
		case apierrors.IsAlreadyExists(err):
			// Ours, not yet in the cache, or someone else's (which no cache
			// holds).
			existing := &corev1.Pod{}
			if gerr := r.apiReader.Get(ctx, client.ObjectKeyFromObject(pod), existing); gerr == nil && !OwnedBy(existing, obj) {
				r.recorder.Eventf(obj, existing, corev1.EventTypeWarning, EventPodNameTaken, "CreatePod",
					"Pod %s belongs to another object; waiting for it to go", pod.Name)
				mu.Lock()
				taken = true
				mu.Unlock()
			}
			return nil
		case apierrors.IsInvalid(err):
			mu.Lock()
			invalid = append(invalid, fmt.Sprintf("pod %s: %v", pod.Name, err))
			mu.Unlock()
			return nil
		case quotaRefusal(err):
			r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventCreationFailed, "CreatePod", "Creating pod %s: %v", pod.Name, err)
			mu.Lock()
			quota.refused = append(quota.refused, err.Error())
			mu.Unlock()
			return nil
		}
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventCreationFailed, "CreatePod", "Creating pod %s: %v", pod.Name, err)
		return fmt.Errorf("creating pod %s: %w", pod.Name, err)
	})
	if len(notes) > 0 {
		list := make([]string, 0, len(notes))
		for n := range notes {
			list = append(list, n)
		}
		sort.Strings(list)
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventUnknownVariable, "CreatePod", "%s", strings.Join(list, "; "))
	}
	if len(invalid) > 0 {
		sort.Strings(invalid)
		if err := r.failInvalidPods(ctx, obj, invalid); err != nil {
			errs = append(errs, err)
		}
	}
	sort.Strings(quota.refused)
	switch {
	case len(errs) > 0:
		return quota, errors.Join(errs...)
	case taken:
		return quota, errNameTaken
	case len(held) > 0:
		return quota, errStaleAddress
	}
	return quota, nil
}

// failInvalidPods fails a job whose pods the API server refuses: retrying
// cannot help.
func (r *Reconciler) failInvalidPods(ctx context.Context, obj client.Object, invalid []string) error {
	latest := r.kind.NewObject()
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(obj), latest); err != nil {
		return err
	}
	original := latest.DeepCopyObject().(client.Object)
	job := r.kind.View(latest)
	r.finished(latest, job, Outcome{Done: true, Reason: ReasonCreationFailed,
		Message: "The job's pods cannot be created: " + strings.Join(invalid, "; ")}, metav1.Now().Rfc3339Copy())
	return r.writeStatus(ctx, original, latest)
}

// waitsForReady reports whether rep's pods wait for the pods of its
// AfterReady types to be Ready.
func waitsForReady(rep *Replica, states *States) bool {
	for _, typ := range rep.AfterReady {
		if !states.AllReady(typ) {
			return true
		}
	}
	return false
}

// parallel runs fn for 0..n-1, createParallelism at a time, and returns the
// errors.
func parallel(n int, fn func(int) error) []error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, createParallelism)
	)
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			if err := fn(i); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	return errs
}
