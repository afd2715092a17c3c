package plugins

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/accelstack/accelstack/pkg/scheduler/preemption"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// PreemptionName is the name of the queue preemption plugin.
const PreemptionName = "T9kPreemption"

// Preemption makes room for a pod that fits no node by evicting pods of
// queues of lower priority (never of a queue with preemptible: false), the
// least important first, each PodGroup whole (pkg/scheduler/preemption). It
// evicts at once and nominates the node, so the room is the preemptor's.
// A pod over its own queue's quota preempts nothing: eviction elsewhere
// cannot make the quota room.
type Preemption struct {
	s *state
	h fwk.Handle
}

var _ fwk.PostFilterPlugin = (*Preemption)(nil)

// NewPreemption is the plugin's factory.
func NewPreemption(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	s, err := stateFor(ctx, h)
	if err != nil {
		return nil, err
	}
	return &Preemption{s: s, h: h}, nil
}

// Name is the plugin's name.
func (p *Preemption) Name() string { return PreemptionName }

// PostFilter finds and evicts the victims.
func (p *Preemption) PostFilter(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, statuses fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	m := p.s.membership(pod)
	q := p.s.queue(m.Queue)
	if q == nil {
		return nil, fwk.NewStatus(fwk.Unschedulable, "the pod is in no queue: no queue preemption")
	}
	if q.Spec.Quota != nil {
		if res, over := queue.Over(q.Spec.Quota.Requests, p.s.allocatedTo(m.Queue), queue.PodRequests(pod)); over {
			return nil, fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("queue %q is at its %s quota: preemption cannot help", m.Queue, res))
		}
	}
	victims := p.victims(q.Spec.Priority)
	if len(victims) == 0 {
		return nil, fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("no pods of queues below priority %d to preempt", q.Spec.Priority))
	}
	node, plan := p.bestPlan(ctx, cs, pod, statuses, victims)
	if plan == nil {
		return nil, fwk.NewStatus(fwk.Unschedulable, "evicting pods of lower-priority queues would not make room")
	}
	if err := p.evict(ctx, pod, node, plan); err != nil {
		return nil, fwk.AsStatus(err)
	}
	return &fwk.PostFilterResult{NominatingInfo: &fwk.NominatingInfo{NominatedNodeName: node, NominatingMode: fwk.ModeOverride}}, fwk.NewStatus(fwk.Success)
}

// victims are the bound pods a pod of a queue of priority prio may evict,
// by node.
func (p *Preemption) victims(prio int32) map[string][]preemption.Victim {
	byNode := map[string][]preemption.Victim{}
	for _, obj := range p.s.pods.GetIndexer().List() {
		pod, ok := obj.(*corev1.Pod)
		if !ok || !queue.Holds(pod) {
			continue
		}
		m := p.s.membership(pod)
		vq := p.s.queue(m.Queue)
		if vq == nil || !preemption.Eligible(prio, vq.Spec.Priority, vq.Spec.Preemptible) {
			continue
		}
		v := preemption.Victim{Pod: pod, QueuePriority: vq.Spec.Priority, QueueShare: p.s.share(m.Queue)}
		if m.Group != "" {
			v.Group = pod.Namespace + "/" + m.Group
			if pg := p.s.group(pod.Namespace, m.Group); pg != nil {
				v.GroupPriority = pg.Spec.Priority
			}
		}
		byNode[pod.Spec.NodeName] = append(byNode[pod.Spec.NodeName], v)
	}
	return byNode
}

// bestPlan returns the node whose eviction plan costs least, and the plan.
func (p *Preemption) bestPlan(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, statuses fwk.NodeToStatusReader, byNode map[string][]preemption.Victim) (string, []preemption.Victim) {
	var (
		bestNode string
		best     []preemption.Victim
		bestPods int
		bestTop  preemption.Victim
	)
	members := map[string]int{}
	for name, vs := range byNode {
		st := statuses.Get(name)
		if st != nil && st.Code() == fwk.UnschedulableAndUnresolvable {
			continue
		}
		ni, err := p.h.SnapshotSharedLister().NodeInfos().Get(name)
		if err != nil {
			continue
		}
		preemption.Sort(vs)
		plan, ok := preemption.Plan(vs, func(evicted []preemption.Victim) bool {
			return p.fitsWithout(ctx, cs, pod, ni, evicted)
		})
		if !ok {
			continue
		}
		for _, v := range plan {
			if v.Group != "" {
				members[v.Group] = len(p.s.groupPods(v.Group))
			}
		}
		pods, top := preemption.Cost(plan, members)
		if best == nil || preemption.Cheaper(pods, top, bestPods, bestTop) {
			bestNode, best, bestPods, bestTop = name, plan, pods, top
		}
	}
	return bestNode, best
}

// fitsWithout reports whether pod passes every filter on ni once evicted
// are gone.
func (p *Preemption) fitsWithout(ctx context.Context, cs fwk.CycleState, pod *corev1.Pod, ni fwk.NodeInfo, evicted []preemption.Victim) bool {
	copyNI := ni.Snapshot()
	state := cs.Clone()
	for _, v := range evicted {
		for _, pi := range copyNI.GetPods() {
			if pi.GetPod().UID != v.Pod.UID {
				continue
			}
			if err := copyNI.RemovePod(logger(ctx), pi.GetPod()); err != nil {
				return false
			}
			if st := p.h.RunPreFilterExtensionRemovePod(ctx, state, pod, pi, copyNI); !st.IsSuccess() {
				return false
			}
			break
		}
	}
	return p.h.RunFilterPluginsWithNominatedPods(ctx, state, pod, copyNI).IsSuccess()
}

// evict deletes the plan's pods, each PodGroup whole, with an event on each.
func (p *Preemption) evict(ctx context.Context, preemptor *corev1.Pod, node string, plan []preemption.Victim) error {
	doomed := map[string]*corev1.Pod{}
	for _, v := range plan {
		doomed[string(v.Pod.UID)] = v.Pod
		if v.Group == "" {
			continue
		}
		for _, member := range p.s.groupPods(v.Group) {
			if !queue.Finished(member) && member.DeletionTimestamp == nil {
				doomed[string(member.UID)] = member
			}
		}
	}
	for _, victim := range doomed {
		if wp := p.h.GetWaitingPod(victim.UID); wp != nil {
			wp.Preempt(PreemptionName, "preempted")
			continue
		}
		msg := fmt.Sprintf("Preempted by %s/%s (queue %q) on node %s", preemptor.Namespace, preemptor.Name, p.s.membership(preemptor).Queue, node)
		p.h.EventRecorder().Eventf(victim, preemptor, corev1.EventTypeNormal, "Preempted", "Preempting", msg)
		err := p.h.ClientSet().CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &victim.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("preempt pod %s/%s: %w", victim.Namespace, victim.Name, err)
		}
		logger(ctx).V(2).Info("Preempted pod", "pod", victim.Namespace+"/"+victim.Name, "preemptor", preemptor.Namespace+"/"+preemptor.Name, "node", node)
	}
	return nil
}
