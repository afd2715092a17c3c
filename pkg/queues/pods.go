package queues

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/cacheselector"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// Indexes of the pod cache and of the manager's PodGroups.
const (
	// groupIndex indexes pods by <namespace>/<group-name label>.
	groupIndex = "queues.scheduler.tensorstack.dev/group"
	// queueLabelIndex indexes pods by their queue label.
	queueLabelIndex = "queues.scheduler.tensorstack.dev/queue-label"
	// groupQueueIndex indexes PodGroups by their queue (default "default").
	groupQueueIndex = "queues.scheduler.tensorstack.dev/queue"
)

// PodSelector selects the pods the package caches: those of the T9k Scheduler.
func PodSelector() fields.Selector {
	return fields.OneTermEqualSelector("spec.schedulerName", schedv1beta1.SchedulerName)
}

// newPodCache returns a cache of the T9k Scheduler's pods, indexed by group
// and by queue label, each pod kept as its schedulingView.
func newPodCache(ctx context.Context, cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	opts.ByObject = map[client.Object]cache.ByObject{&corev1.Pod{}: {Field: PodSelector(), Transform: schedulingView}}
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	if err := indexPods(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// schedulingView is the transform of the pod cache. Any tenant's pod may
// ask for the T9k Scheduler, so of each pod the cache keeps only what the
// queues read: the stub metadata (cacheselector.StubMeta: no annotations,
// owner references or managed fields), the node, the scheduler, the
// pod-level resources and overhead, each container's name, resources and
// restart policy, and the phase. A pod a tenant fills with a megabyte of
// environment, arguments or annotations costs the cache a few hundred
// bytes.
func schedulingView(in any) (any, error) {
	p, ok := in.(*corev1.Pod)
	if !ok {
		return in, nil
	}
	out := &corev1.Pod{
		TypeMeta:   p.TypeMeta,
		ObjectMeta: cacheselector.StubMeta(p, schedv1beta1.QueueLabel, schedv1beta1.GroupNameLabel, schedv1beta1.RoleLabel),
		Spec: corev1.PodSpec{
			NodeName: p.Spec.NodeName, SchedulerName: p.Spec.SchedulerName,
			Resources: p.Spec.Resources, Overhead: p.Spec.Overhead,
			InitContainers: resourcesOnly(p.Spec.InitContainers), Containers: resourcesOnly(p.Spec.Containers),
		},
		Status: corev1.PodStatus{Phase: p.Status.Phase},
	}
	return out, nil
}

// resourcesOnly returns cs with only each container's name, resources
// and restart policy, which the pod's requests are computed from.
func resourcesOnly(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i := range cs {
		out[i] = corev1.Container{Name: cs[i].Name, Resources: cs[i].Resources, RestartPolicy: cs[i].RestartPolicy}
	}
	return out
}

// indexPods adds the pod indexes to fi.
func indexPods(ctx context.Context, fi client.FieldIndexer) error {
	if err := fi.IndexField(ctx, &corev1.Pod{}, groupIndex, podGroupKey); err != nil {
		return fmt.Errorf("indexing pods by PodGroup: %w", err)
	}
	if err := fi.IndexField(ctx, &corev1.Pod{}, queueLabelIndex, podQueueLabel); err != nil {
		return fmt.Errorf("indexing pods by queue label: %w", err)
	}
	return nil
}

// indexGroups adds the PodGroup index to fi.
func indexGroups(ctx context.Context, fi client.FieldIndexer) error {
	if err := fi.IndexField(ctx, &schedv1beta1.PodGroup{}, groupQueueIndex, groupQueue); err != nil {
		return fmt.Errorf("indexing PodGroups by queue: %w", err)
	}
	return nil
}

// podGroupKey is the groupIndex value of a pod: <namespace>/<group-name>.
func podGroupKey(o client.Object) []string {
	if g := o.GetLabels()[schedv1beta1.GroupNameLabel]; g != "" {
		return []string{o.GetNamespace() + "/" + g}
	}
	return nil
}

// podQueueLabel is the queueLabelIndex value of a pod.
func podQueueLabel(o client.Object) []string {
	if q := o.GetLabels()[schedv1beta1.QueueLabel]; q != "" {
		return []string{q}
	}
	return nil
}

// groupQueue is the groupQueueIndex value of a PodGroup.
func groupQueue(o client.Object) []string {
	pg, ok := o.(*schedv1beta1.PodGroup)
	if !ok {
		return nil
	}
	return []string{queue.GroupQueue(pg)}
}

// members finds the pods of groups and queues in the caches.
type members struct {
	// pods reads the pod cache, groups the PodGroups (the manager's cache).
	pods, groups client.Reader
}

// groupPods returns the pods labelled with PodGroup namespace/name.
func (m *members) groupPods(ctx context.Context, namespace, name string) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := m.pods.List(ctx, &list, client.MatchingFields{groupIndex: namespace + "/" + name}); err != nil {
		return nil, fmt.Errorf("listing the pods of PodGroup %s/%s: %w", namespace, name, err)
	}
	return pointers(list.Items), nil
}

// queueMembers returns the pods in queue name (by queue.MembershipOf) and
// the PodGroups that name it.
func (m *members) queueMembers(ctx context.Context, name string) ([]*corev1.Pod, []*schedv1beta1.PodGroup, error) {
	var groups schedv1beta1.PodGroupList
	if err := m.groups.List(ctx, &groups, client.MatchingFields{groupQueueIndex: name}); err != nil {
		return nil, nil, fmt.Errorf("listing the PodGroups of queue %s: %w", name, err)
	}
	seen := map[types.UID]bool{}
	var pods []*corev1.Pod
	add := func(list []*corev1.Pod) {
		for _, p := range list {
			if !seen[p.UID] {
				seen[p.UID] = true
				pods = append(pods, p)
			}
		}
	}
	for i := range groups.Items {
		list, err := m.groupPods(ctx, groups.Items[i].Namespace, groups.Items[i].Name)
		if err != nil {
			return nil, nil, err
		}
		add(list)
	}
	var labelled corev1.PodList
	if err := m.pods.List(ctx, &labelled, client.MatchingFields{queueLabelIndex: name}); err != nil {
		return nil, nil, fmt.Errorf("listing the pods labelled with queue %s: %w", name, err)
	}
	add(pointers(labelled.Items))

	lookup := m.lookup(ctx)
	in := pods[:0]
	for _, p := range pods {
		if queue.MembershipOf(p, lookup).Queue == name {
			in = append(in, p)
		}
	}
	return in, pointers(groups.Items), nil
}

// lookup returns a PodGroup lookup through the groups reader; a group that
// cannot be read counts as missing.
func (m *members) lookup(ctx context.Context) queue.GroupLookup {
	return func(namespace, name string) *schedv1beta1.PodGroup {
		pg := &schedv1beta1.PodGroup{}
		if err := m.groups.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pg); err != nil {
			return nil
		}
		return pg
	}
}

// allocated is the sum of the requests of the pods that hold resources.
func allocated(pods []*corev1.Pod) corev1.ResourceList {
	var sum corev1.ResourceList
	for _, p := range pods {
		if queue.Holds(p) {
			sum = queue.Add(sum, queue.PodRequests(p))
		}
	}
	return sum
}

// countPhases counts pods by phase; a pod without a phase yet is pending.
func countPhases(pods []*corev1.Pod) schedv1beta1.PodCounts {
	var c schedv1beta1.PodCounts
	for _, p := range pods {
		switch p.Status.Phase {
		case corev1.PodRunning:
			c.Running++
		case corev1.PodSucceeded:
			c.Succeeded++
		case corev1.PodFailed:
			c.Failed++
		case corev1.PodUnknown:
			c.Unknown++
		default:
			c.Pending++
		}
	}
	return c
}

func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
