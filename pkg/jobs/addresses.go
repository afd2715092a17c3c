package jobs

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// A replica's Service resolves to its pod's address. When the pod is
// replaced (a restart, a resume), the EndpointSlice controller drops the old
// address some time after the pod is gone, later on a busy control plane, and
// a peer that resolves the name in between is given the address of a pod
// that no longer exists. Rendezvous libraries retry a refused connection but
// not an unreachable host: PyTorch's TCPStore gives up on "no route to host"
// after two tries, and the peer fails. So the engine recreates such a
// replica once its Service publishes no address, or after staleAddressWait
// (the EndpointSlice controller may be down).
const (
	// staleAddressWait bounds how long a replica waits for its Service to
	// drop the address of its earlier pod.
	staleAddressWait = 30 * time.Second
	// staleAddressRetry is how soon a reconcile that held a replica back is
	// retried.
	staleAddressRetry = time.Second
	// addressWaitTTL is how long a wait is remembered after it began: the
	// job may be deleted while it waits.
	addressWaitTTL = 10 * time.Minute
)

// EventStaleAddress is the reason of the event of a replica held back
// until its Service drops the address of its earlier pod.
const EventStaleAddress = "StaleAddress"

// addressWaits remembers since when each replica, by namespace and pod name,
// has waited for its Service to drop the address of its earlier pod.
type addressWaits struct {
	mu    sync.Mutex
	since map[types.NamespacedName]time.Time
}

func newAddressWaits() *addressWaits {
	return &addressWaits{since: map[types.NamespacedName]time.Time{}}
}

// hold decides, for each replica in published (true where its Service
// still publishes an address), whether it waits at now; a replica not
// published, or that has waited staleAddressWait, is released. started are
// the replicas whose wait begins at now.
func (w *addressWaits) hold(ns string, published map[string]bool, now time.Time) (held map[string]bool, started []string) {
	held = map[string]bool{}
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, t := range w.since {
		if now.Sub(t) > addressWaitTTL {
			delete(w.since, k)
		}
	}
	for name, pub := range published {
		key := types.NamespacedName{Namespace: ns, Name: name}
		since, waiting := w.since[key]
		switch {
		case !pub:
			delete(w.since, key)
		case !waiting:
			w.since[key] = now
			held[name] = true
			started = append(started, name)
		case now.Sub(since) < staleAddressWait:
			held[name] = true
		default:
			delete(w.since, key)
		}
	}
	return held, started
}

// staleAddresses returns the replicas among want (pod names) that had a pod
// before and whose Service still publishes an address, unless they have
// waited staleAddressWait for it to go. A failure to list the
// EndpointSlices holds nothing back: it is logged.
func (r *Reconciler) staleAddresses(ctx context.Context, job *Job, want []string) map[string]bool {
	had := map[string]bool{}
	for _, t := range job.Status.Tasks {
		for _, rs := range t.Replicas {
			if rs.UID != "" {
				had[rs.Name] = true
			}
		}
	}
	published := map[string]bool{}
	for _, name := range want {
		if had[name] {
			published[name] = false
		}
	}
	if len(published) == 0 {
		return nil
	}
	obj := job.Object
	var slices discoveryv1.EndpointSliceList
	// The EndpointSlice controller copies a Service's labels onto its
	// slices: the job's label selects the slices of all its Services.
	err := r.apiReader.List(ctx, &slices, client.InNamespace(obj.GetNamespace()), client.MatchingLabels{JobNameLabel: obj.GetName()})
	if err != nil {
		log.FromContext(ctx).Error(err, "Listing the EndpointSlices of the job's Services; recreating its replicas without waiting for their old addresses to go")
		return nil
	}
	for _, s := range slices.Items {
		name := s.Labels[discoveryv1.LabelServiceName]
		if _, ok := published[name]; !ok {
			continue
		}
		for _, ep := range s.Endpoints {
			if len(ep.Addresses) > 0 {
				published[name] = true
			}
		}
	}
	held, started := r.addressWaits.hold(obj.GetNamespace(), published, time.Now())
	for _, name := range started {
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventStaleAddress, "CreatePod",
			"Service %s still resolves to the address of the replica's earlier pod: recreating the pod once it does not (at most %s)", name, staleAddressWait)
	}
	return held
}

// errStaleAddress means some replica was held back until its Service drops
// the address of its earlier pod: the reconcile is retried soon.
var errStaleAddress = errors.New("a Service still resolves to the address of a replaced pod")
