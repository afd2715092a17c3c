package plugins

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/gang"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// GangName is the name of the gang scheduling plugin.
const GangName = "T9kGang"

// DefaultGangTimeout is how long the reserved pods of an incomplete gang
// wait for the rest before every reservation is released.
const DefaultGangTimeout = 60 * time.Second

// Gang binds the pods of a PodGroup all together or not at all. PreEnqueue
// keeps the pods of a group that does not yet have the pods its minMember
// and roles ask for out of the scheduling queue, so that a gang being
// created takes no scheduling attempt (and writes no pod status) before
// its last member arrives, which activates the others; the PodGroup's
// SufficientGroupMember condition says what it lacks. PreFilter checks the
// same again when a pod is tried; Permit keeps each reserved pod waiting until
// the group's reserved and bound pods satisfy it, then lets them all bind;
// when one is rejected or the wait times out, Unreserve rejects every other
// waiting pod of the group, so no reservation of a gang that cannot
// complete is kept and no partial gang is bound, and the group rests for
// one gang timeout, leaving the room to other pods, before it is tried
// again.
type Gang struct {
	s       *state
	h       fwk.Handle
	timeout time.Duration

	mu sync.Mutex
	// resting holds the groups whose last attempt failed, until when: their
	// pods are not tried again before, so an incomplete gang does not keep
	// the room from other pods by reserving it over and over.
	resting map[string]time.Time
}

var (
	_ fwk.PreEnqueuePlugin  = (*Gang)(nil)
	_ fwk.PreFilterPlugin   = (*Gang)(nil)
	_ fwk.PermitPlugin      = (*Gang)(nil)
	_ fwk.ReservePlugin     = (*Gang)(nil)
	_ fwk.EnqueueExtensions = (*Gang)(nil)
)

// NewGang is the plugin's factory.
func NewGang(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	s, err := stateFor(ctx, h)
	if err != nil {
		return nil, err
	}
	return &Gang{s: s, h: h, timeout: gangTimeout, resting: map[string]time.Time{}}, nil
}

// gangTimeout is set by the --gang-timeout flag of the scheduler command.
var gangTimeout = DefaultGangTimeout

// Name is the plugin's name.
func (p *Gang) Name() string { return GangName }

// PreEnqueue keeps the pods of a group that is not yet complete, or is
// resting, out of the scheduling queue.
func (p *Gang) PreEnqueue(_ context.Context, pod *corev1.Pod) *fwk.Status {
	if st := p.holdBack(pod); st.Code() != fwk.Skip {
		return st
	}
	return nil // Skip would gate a pod of no group
}

// PreFilter holds back the pods of a group that is not yet complete.
func (p *Gang) PreFilter(_ context.Context, _ fwk.CycleState, pod *corev1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	return nil, p.holdBack(pod)
}

// holdBack says why pod may not be tried now: its group does not exist,
// is resting after a failed attempt, or lacks members. It skips a pod of
// no group.
func (p *Gang) holdBack(pod *corev1.Pod) *fwk.Status {
	m := p.s.membership(pod)
	if m.Group == "" {
		return fwk.NewStatus(fwk.Skip)
	}
	pg := p.s.group(pod.Namespace, m.Group)
	if pg == nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("PodGroup %s/%s does not exist", pod.Namespace, m.Group))
	}
	if until, ok := p.restingUntil(pod.Namespace + "/" + m.Group); ok {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf(
			"PodGroup %s/%s could not be placed whole; trying again at %s", pod.Namespace, m.Group, until.Format(time.RFC3339)))
	}
	var c gang.Count
	for _, other := range p.s.groupPods(pod.Namespace + "/" + m.Group) {
		if queue.Finished(other) || other.DeletionTimestamp != nil {
			continue
		}
		c.Add(other.Labels[schedv1beta1.RoleLabel])
	}
	if short := gang.Shortfall(&pg.Spec, c); short != "" {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("PodGroup %s/%s has %s", pod.Namespace, m.Group, short))
	}
	return nil
}

// PreFilterExtensions returns nil: a gang does not depend on a node's pods.
func (p *Gang) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Permit lets the pod bind once its group is satisfied by the pods reserved
// or bound, and then lets every waiting pod of the group bind with it.
func (p *Gang) Permit(ctx context.Context, _ fwk.CycleState, pod *corev1.Pod, _ string) (*fwk.Status, time.Duration) {
	m := p.s.membership(pod)
	if m.Group == "" {
		return nil, 0
	}
	pg := p.s.group(pod.Namespace, m.Group)
	if pg == nil {
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("PodGroup %s/%s does not exist", pod.Namespace, m.Group)), 0
	}
	key := pod.Namespace + "/" + m.Group
	total, byRole := p.s.heldBy(key)
	if short := gang.Shortfall(&pg.Spec, gang.Count{Total: total, ByRole: byRole}); short != "" {
		logger(ctx).V(4).Info("Gang incomplete, waiting", "pod", pod.Namespace+"/"+pod.Name, "podGroup", key, "has", short)
		return fwk.NewStatus(fwk.Wait, fmt.Sprintf("PodGroup %s has %s reserved", key, short)), p.timeout
	}
	p.h.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
		if wpKey(wp.GetPod()) == key {
			wp.Allow(GangName)
		}
	})
	return nil, 0
}

// Reserve does nothing: the queue plugin accounts reservations.
func (p *Gang) Reserve(context.Context, fwk.CycleState, *corev1.Pod, string) *fwk.Status { return nil }

// Unreserve rejects the group's other waiting pods, releasing their
// reservations, when one of them is rejected or times out.
func (p *Gang) Unreserve(ctx context.Context, _ fwk.CycleState, pod *corev1.Pod, _ string) {
	key := wpKey(pod)
	if key == "" {
		return
	}
	p.rest(key)
	p.h.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
		if other := wp.GetPod(); other.UID != pod.UID && wpKey(other) == key {
			logger(ctx).V(3).Info("Releasing gang member", "pod", other.Namespace+"/"+other.Name, "podGroup", key, "because", pod.Name)
			wp.Reject(GangName, fmt.Sprintf("PodGroup %s: member %s was not scheduled", key, pod.Name))
		}
	})
}

// EventsToRegister requeues held-back pods when the group or its pods change.
func (p *Gang) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return schedulerEvents(), nil
}

// wpKey is the "namespace/group" of pod, "" for a pod in no group.
func wpKey(pod *corev1.Pod) string {
	if g := pod.Labels[schedv1beta1.GroupNameLabel]; g != "" {
		return pod.Namespace + "/" + g
	}
	return ""
}

// rest keeps the group key from being tried for one gang timeout, then
// activates its pods.
func (p *Gang) rest(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until, ok := p.resting[key]; ok && time.Now().Before(until) {
		return
	}
	p.resting[key] = time.Now().Add(p.timeout)
	time.AfterFunc(p.timeout, func() {
		p.mu.Lock()
		delete(p.resting, key)
		p.mu.Unlock()
		p.s.activate(p.s.groupPods(key))
	})
}

// restingUntil reports whether the group key is resting, and until when.
func (p *Gang) restingUntil(key string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	until, ok := p.resting[key]
	return until, ok && time.Now().Before(until)
}
