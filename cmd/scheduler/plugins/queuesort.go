package plugins

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/accelstack/accelstack/pkg/scheduler/queuesort"
)

// QueueSortName is the name of the queue sort plugin.
const QueueSortName = "T9kQueueSort"

// QueueSort orders pending pods by queue priority, the queue's dominant
// share, PodGroup priority, pod priority and age (pkg/scheduler/queuesort).
type QueueSort struct{ s *state }

var _ fwk.QueueSortPlugin = (*QueueSort)(nil)

// NewQueueSort is the plugin's factory.
func NewQueueSort(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	s, err := stateFor(ctx, h)
	if err != nil {
		return nil, err
	}
	return &QueueSort{s: s}, nil
}

// Name is the plugin's name.
func (p *QueueSort) Name() string { return QueueSortName }

// Less reports whether a is tried before b.
func (p *QueueSort) Less(a, b fwk.QueuedEntityInfo) bool {
	return queuesort.Less(p.key(a), p.key(b))
}

type podInfoGetter interface{ GetPodInfo() fwk.PodInfo }

func (p *QueueSort) key(e fwk.QueuedEntityInfo) queuesort.Key {
	k := queuesort.Key{PodPriority: e.GetPriority(), Timestamp: e.GetTimestamp()}
	g, ok := e.(podInfoGetter)
	if !ok || g.GetPodInfo() == nil {
		return k
	}
	pod := g.GetPodInfo().GetPod()
	m := p.s.membership(pod)
	if q := p.s.queue(m.Queue); q != nil {
		k.QueuePriority = q.Spec.Priority
		k.QueueShare = p.s.share(m.Queue)
	}
	if m.Group != "" {
		if pg := p.s.group(pod.Namespace, m.Group); pg != nil {
			k.GroupPriority = pg.Spec.Priority
			k.Group, k.GroupTimestamp = pod.Namespace+"/"+m.Group, pg.CreationTimestamp.Time
		}
	}
	return k
}
