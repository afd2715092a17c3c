package plugins

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// QueueName is the name of the queue admission plugin.
const QueueName = "T9kQueue"

// queueStateKey keys the plugin's per-cycle data.
const queueStateKey fwk.StateKey = "accelstack/" + QueueName

// Queue admits a pod to its queue. PreFilter refuses a pod whose queue does
// not exist or is closed, whose namespace may not use the queue, that is
// larger than every shape of the queue's profile, or that would take the
// queue over its quota (for a PodGroup,
// the pods the gang still needs are counted together, so a gang that
// cannot fit the quota reserves nothing), with the reason in the pod's
// PodScheduled condition; Filter keeps the pod to the
// queue's nodeSelector. Reserve and Unreserve account what the queue holds
// before the bindings are seen.
type Queue struct {
	s          *state
	namespaces corelisters.NamespaceLister
}

var (
	_ fwk.PreFilterPlugin   = (*Queue)(nil)
	_ fwk.FilterPlugin      = (*Queue)(nil)
	_ fwk.ReservePlugin     = (*Queue)(nil)
	_ fwk.EnqueueExtensions = (*Queue)(nil)
)

// NewQueue is the plugin's factory.
func NewQueue(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	s, err := stateFor(ctx, h)
	if err != nil {
		return nil, err
	}
	namespaces := h.SharedInformerFactory().Core().V1().Namespaces()
	// A namespace newly labelled may now match a queue's namespaceSelector.
	if _, err := namespaces.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj interface{}) {
			o, ok1 := oldObj.(*corev1.Namespace)
			n, ok2 := newObj.(*corev1.Namespace)
			if ok1 && ok2 && !maps.Equal(o.Labels, n.Labels) {
				s.activateNamespace(n.Name)
			}
		},
	}); err != nil {
		return nil, fmt.Errorf("namespace handler: %w", err)
	}
	return &Queue{s: s, namespaces: namespaces.Lister()}, nil
}

// Name is the plugin's name.
func (p *Queue) Name() string { return QueueName }

// queueCycle is what PreFilter found for Filter.
type queueCycle struct {
	nodes labels.Selector // nil: every node
}

// Clone returns the data itself: it is never changed after PreFilter.
func (c *queueCycle) Clone() fwk.StateData { return c }

// PreFilter admits the pod to its queue.
func (p *Queue) PreFilter(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	m := p.s.membership(pod)
	if m.Queue == "" {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	q := p.s.queue(m.Queue)
	ns, err := p.namespaces.Get(pod.Namespace)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("namespace %s: %w", pod.Namespace, err))
	}
	w := queue.Workload{Namespace: ns, Pods: p.s.gangRequests(pod, m), Granted: queue.Granted(pod, m.Queue)}
	if r := queue.Admit(m.Queue, q, w, p.s.queueState(m.Queue, q)); r != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, r.Message)
	}
	c := &queueCycle{}
	if q.Spec.NodeSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(q.Spec.NodeSelector)
		if err != nil {
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("queue %q: spec.nodeSelector: %v", m.Queue, err))
		}
		c.nodes = sel
	}
	cs.Write(queueStateKey, c)
	return nil, nil
}

// PreFilterExtensions returns nil: what a queue allows does not depend on
// the other pods of a node.
func (p *Queue) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter keeps the pod to the nodes of its queue's nodeSelector.
func (p *Queue) Filter(_ context.Context, cs fwk.CycleState, pod *corev1.Pod, ni fwk.NodeInfo) *fwk.Status {
	d, err := cs.Read(queueStateKey)
	if err != nil {
		return nil // PreFilter skipped: the pod is in no queue
	}
	c, _ := d.(*queueCycle)
	if c == nil || c.nodes == nil || c.nodes.Matches(labels.Set(ni.Node().Labels)) {
		return nil
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node is outside the queue's nodeSelector")
}

// Reserve accounts the pod to its queue at once.
func (p *Queue) Reserve(_ context.Context, _ fwk.CycleState, pod *corev1.Pod, _ string) *fwk.Status {
	p.s.assume(pod)
	return nil
}

// Unreserve gives the reservation back.
func (p *Queue) Unreserve(_ context.Context, _ fwk.CycleState, pod *corev1.Pod, _ string) {
	p.s.unassume(pod)
}

// EventsToRegister requeues a refused pod when its own labels change or a
// node joins or is relabelled (the queue's nodeSelector). Changes of
// Queues, PodGroups, namespaces, shapes and of what a queue holds activate
// the pods they concern from the plugins' own state (state.activateQueue and
// friends), once it has them; a pod added elsewhere in the cluster requeues
// nothing, so pending pods are not tried again with every pod created.
func (p *Queue) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return schedulerEvents(), nil
}

// schedulerEvents are the cluster events that can make a pod the T9k
// plugins refused schedulable.
func schedulerEvents() []fwk.ClusterEventWithHint {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.UnscheduledPod, ActionType: fwk.UpdatePodLabel}},
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}},
	}
}

// gangRequests are the requests that admitting pod takes from its queue:
// its own, and for a pod of a PodGroup those of the group's other pending
// pods that the gang still needs to reach minMember.
func (s *state) gangRequests(pod *corev1.Pod, m queue.Membership) []corev1.ResourceList {
	reqs := []corev1.ResourceList{queue.PodRequests(pod)}
	if m.Group == "" {
		return reqs
	}
	pg := s.group(pod.Namespace, m.Group)
	if pg == nil {
		return reqs
	}
	key := pod.Namespace + "/" + m.Group
	heldNow, _ := s.heldBy(key)
	need := int(pg.Spec.MinMember) - heldNow - 1
	for _, other := range s.groupPods(key) {
		if need <= 0 {
			break
		}
		if other.UID == pod.UID || other.Spec.NodeName != "" || queue.Finished(other) || other.DeletionTimestamp != nil {
			continue
		}
		if _, ok := s.holding(other.UID); ok {
			continue
		}
		reqs = append(reqs, queue.PodRequests(other))
		need--
	}
	return reqs
}

// queueState is what admission to the queue name needs beyond its spec.
func (s *state) queueState(name string, q *schedv1beta1.Queue) queue.State {
	st := queue.State{Allocated: s.allocatedTo(name)}
	if q != nil && q.Spec.ResourceShapeProfile != nil && *q.Spec.ResourceShapeProfile != "" {
		st.Shapes, st.ShapesErr = s.shapes(*q.Spec.ResourceShapeProfile)
	}
	return st
}
