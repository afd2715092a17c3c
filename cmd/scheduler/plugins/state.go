package plugins

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/gang"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// groupIndex indexes pods by "namespace/group"; queueIndex indexes pods by
// their queue label.
const (
	groupIndex = "t9k-podgroup"
	queueIndex = "t9k-queue"
)

// held is what one pod holds of its queue.
type held struct {
	queue    string
	group    string // namespace/name, "" for none
	role     string
	requests corev1.ResourceList
	// assumed: reserved by this scheduler and not yet seen bound.
	assumed bool
}

// state is what the T9k plugins of one scheduler profile share: the Queues
// and PodGroups, and what every queue holds now, kept up to date from the
// pod informer and from the scheduler's own reservations, so a decision
// never waits on a status written by a controller.
type state struct {
	handle fwk.Handle
	queues cache.Indexer
	groups cache.Indexer
	pods   cache.SharedIndexInformer
	// shapeCMs holds the ConfigMap of resource shape profiles.
	shapeCMs shapeLister

	mu        sync.Mutex
	held      map[types.UID]held
	allocated map[string]corev1.ResourceList
	// groupHeld counts the held pods of each group ("namespace/name") by
	// role ("" for none).
	groupHeld map[string]map[string]int

	// activations carries pods to activate to the goroutine that does it,
	// so no informer handler waits on the scheduling queue.
	activations chan map[string]*corev1.Pod
}

var (
	statesMu sync.Mutex
	states   = map[fwk.Handle]*state{}
)

// stateFor returns the state of the profile of h, starting it on first use.
func stateFor(ctx context.Context, h fwk.Handle) (*state, error) {
	statesMu.Lock()
	defer statesMu.Unlock()
	if s, ok := states[h]; ok {
		return s, nil
	}
	s, err := newState(ctx, h)
	if err != nil {
		return nil, err
	}
	states[h] = s
	return s, nil
}

func newState(ctx context.Context, h fwk.Handle) (*state, error) {
	dyn, err := dynamic.NewForConfig(h.KubeConfig())
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	s := &state{handle: h, held: map[types.UID]held{}, allocated: map[string]corev1.ResourceList{},
		groupHeld: map[string]map[string]int{}, activations: make(chan map[string]*corev1.Pod, 1024)}
	go s.runActivations(ctx)
	queues := typedInformer(dyn, "queues", func() runtime.Object { return &schedv1beta1.Queue{} })
	groups := typedInformer(dyn, "podgroups", func() runtime.Object { return &schedv1beta1.PodGroup{} })
	s.queues, s.groups = queues.GetIndexer(), groups.GetIndexer()

	s.pods = h.SharedInformerFactory().Core().V1().Pods().Informer()
	if err := s.pods.AddIndexers(cache.Indexers{groupIndex: indexByGroup, queueIndex: indexByQueue}); err != nil {
		return nil, fmt.Errorf("pod index: %w", err)
	}
	if _, err := s.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.podAdded,
		UpdateFunc: func(_, obj interface{}) { s.observe(obj) },
		DeleteFunc: s.forget,
	}); err != nil {
		return nil, fmt.Errorf("pod handler: %w", err)
	}
	// A decision reads this state, so the pods a change may unblock are
	// activated here, once the state has it, not on the framework's own
	// copy of the event, which may come first.
	if _, err := queues.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { s.queueChanged(obj) },
		UpdateFunc: func(_, obj interface{}) { s.queueChanged(obj) },
	}); err != nil {
		return nil, fmt.Errorf("queue handler: %w", err)
	}
	if _, err := groups.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { s.groupChanged(obj) },
		UpdateFunc: func(_, obj interface{}) { s.groupChanged(obj) },
	}); err != nil {
		return nil, fmt.Errorf("podgroup handler: %w", err)
	}
	shapes := shapesFactory(h.ClientSet())
	shapeCMs := shapes.Core().V1().ConfigMaps()
	s.shapeCMs = shapeLister{shapeCMs.Lister().ConfigMaps(schedv1beta1.ShapesNamespace)}
	shapeInformer := shapeCMs.Informer()
	// A shape profile changed may let pods of any queue fit.
	if _, err := shapeInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { s.activateAll() },
		UpdateFunc: func(_, _ interface{}) { s.activateAll() },
	}); err != nil {
		return nil, fmt.Errorf("shapes handler: %w", err)
	}
	shapes.Start(ctx.Done())
	go queues.Run(ctx.Done())
	go groups.Run(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), queues.HasSynced, groups.HasSynced, shapeInformer.HasSynced) {
		return nil, fmt.Errorf("queues and podgroups of %s did not sync; are the CRDs installed?", schedv1beta1.GroupVersion)
	}
	return s, nil
}

// typedInformer watches a resource of the scheduler API group through the
// dynamic client and stores typed objects.
func typedInformer(dyn dynamic.Interface, resource string, newObj func() runtime.Object) cache.SharedIndexInformer {
	ri := dyn.Resource(schedv1beta1.GroupVersion.WithResource(resource))
	lw := &cache.ListWatch{
		ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) },
		WatchFuncWithContext: ri.Watch,
	}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = inf.SetTransform(func(obj interface{}) (interface{}, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		typed := newObj()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return nil, fmt.Errorf("%s %s: %w", resource, u.GetName(), err)
		}
		return typed, nil
	})
	return inf
}

func indexByGroup(obj interface{}) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	if g := pod.Labels[schedv1beta1.GroupNameLabel]; g != "" {
		return []string{pod.Namespace + "/" + g}, nil
	}
	return nil, nil
}

func indexByQueue(obj interface{}) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	if q := pod.Labels[schedv1beta1.QueueLabel]; q != "" {
		return []string{q}, nil
	}
	return nil, nil
}

// queueChanged activates the pending pods of a queue that was created or
// changed.
func (s *state) queueChanged(obj interface{}) {
	if q, ok := obj.(*schedv1beta1.Queue); ok {
		s.activateQueue(q.Name)
	}
}

// groupChanged activates the pending pods of a PodGroup that was created or
// changed.
func (s *state) groupChanged(obj interface{}) {
	if pg, ok := obj.(*schedv1beta1.PodGroup); ok {
		s.activate(s.groupPods(pg.Namespace + "/" + pg.Name))
	}
}

// podAdded accounts a new pod and, when a pending pod completes its
// PodGroup, activates the group's other pending pods, which were held back
// for want of it. Only the completing pod does, so a gang's members are not
// tried again with every member that arrives.
func (s *state) podAdded(obj interface{}) {
	s.observe(obj)
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName != "" {
		return
	}
	key := wpKey(pod)
	if key == "" {
		return
	}
	pg := s.group(pod.Namespace, pod.Labels[schedv1beta1.GroupNameLabel])
	if pg == nil {
		return
	}
	members := s.groupPods(key)
	var c gang.Count
	for _, m := range members {
		if !queue.Finished(m) && m.DeletionTimestamp == nil {
			c.Add(m.Labels[schedv1beta1.RoleLabel])
		}
	}
	if gang.Satisfied(&pg.Spec, c) {
		s.activate(members)
	}
}

// activateQueue activates the pending pods of queue name: its own and
// those of its PodGroups.
func (s *state) activateQueue(name string) {
	if name == "" {
		return
	}
	objs, _ := s.pods.GetIndexer().ByIndex(queueIndex, name)
	var pods []*corev1.Pod
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
	}
	for _, o := range s.groups.List() {
		if pg, ok := o.(*schedv1beta1.PodGroup); ok && queue.GroupQueue(pg) == name {
			pods = append(pods, s.groupPods(pg.Namespace+"/"+pg.Name)...)
		}
	}
	s.activate(pods)
}

// activateAll activates every pending pod of the T9k Scheduler.
func (s *state) activateAll() {
	objs := s.pods.GetIndexer().List()
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
	}
	s.activate(pods)
}

// activateNamespace activates the pending pods of namespace ns.
func (s *state) activateNamespace(ns string) {
	objs, _ := s.pods.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
	}
	s.activate(pods)
}

// activate moves the pending ones of pods to the active scheduling queue.
func (s *state) activate(pods []*corev1.Pod) {
	pending := map[string]*corev1.Pod{}
	for _, p := range pods {
		if p.Spec.NodeName == "" && p.Spec.SchedulerName == schedv1beta1.SchedulerName && !queue.Finished(p) {
			pending[p.Namespace+"/"+p.Name] = p
		}
	}
	if len(pending) > 0 {
		s.activations <- pending
	}
}

// runActivations activates the pods sent to it, merging what is waiting.
func (s *state) runActivations(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case pods := <-s.activations:
			for more := true; more; {
				select {
				case next := <-s.activations:
					maps.Copy(pods, next)
				default:
					more = false
				}
			}
			s.handle.Activate(klog.FromContext(ctx), pods)
		}
	}
}

// queue returns the Queue name, or nil.
func (s *state) queue(name string) *schedv1beta1.Queue {
	obj, ok, _ := s.queues.GetByKey(name)
	if !ok {
		return nil
	}
	q, _ := obj.(*schedv1beta1.Queue)
	return q
}

// group returns the PodGroup namespace/name, or nil.
func (s *state) group(namespace, name string) *schedv1beta1.PodGroup {
	obj, ok, _ := s.groups.GetByKey(namespace + "/" + name)
	if !ok {
		return nil
	}
	pg, _ := obj.(*schedv1beta1.PodGroup)
	return pg
}

// membership resolves pod's queue and group. A pod of another scheduler
// belongs to none, whatever its labels: the T9k Scheduler never counts it
// against a queue, holds it back or evicts it (as the queue controllers,
// which watch only its own pods, never count it either).
func (s *state) membership(pod *corev1.Pod) queue.Membership {
	if pod.Spec.SchedulerName != schedv1beta1.SchedulerName {
		return queue.Membership{}
	}
	return queue.MembershipOf(pod, s.group)
}

// groupPods returns the pods of the group namespace/name.
func (s *state) groupPods(key string) []*corev1.Pod {
	objs, _ := s.pods.GetIndexer().ByIndex(groupIndex, key)
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
	}
	return pods
}

// allocatedTo returns a copy of what queue name holds now.
func (s *state) allocatedTo(name string) corev1.ResourceList {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allocated[name].DeepCopy()
}

// share is the dominant-resource share of the queue name.
func (s *state) share(name string) float64 {
	q := s.queue(name)
	if q == nil || q.Spec.Quota == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return queue.DominantShare(s.allocated[name], q.Spec.Quota.Requests)
}

// holding reports what pod uid holds, if anything.
func (s *state) holding(uid types.UID) (held, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.held[uid]
	return h, ok
}

// heldBy counts the pods of group key that hold resources (bound or
// assumed), by role.
func (s *state) heldBy(key string) (total int, byRole map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byRole = map[string]int{}
	for role, n := range s.groupHeld[key] {
		total += n
		byRole[role] = n
	}
	return total, byRole
}

// assume records that this scheduler reserved a node for pod.
func (s *state) assume(pod *corev1.Pod) {
	m := s.membership(pod)
	if m.Queue == "" && m.Group == "" {
		return
	}
	s.set(pod.UID, held{queue: m.Queue, group: groupKey(pod, m), role: m.Role, requests: queue.PodRequests(pod), assumed: true})
}

// unassume drops a reservation that did not end in a binding.
func (s *state) unassume(pod *corev1.Pod) {
	s.mu.Lock()
	h, ok := s.held[pod.UID]
	ok = ok && h.assumed
	if ok {
		s.dropLocked(pod.UID, h)
	}
	s.mu.Unlock()
	if ok {
		s.activateQueue(h.queue)
	}
}

func (s *state) observe(obj interface{}) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	m := s.membership(pod)
	if (m.Queue == "" && m.Group == "") || !queue.Holds(pod) {
		s.mu.Lock()
		h, ok := s.held[pod.UID]
		freed := ok && (!h.assumed || queue.Finished(pod) || pod.DeletionTimestamp != nil)
		if freed {
			s.dropLocked(pod.UID, h)
		}
		s.mu.Unlock()
		if freed {
			s.activateQueue(h.queue)
		}
		return
	}
	s.set(pod.UID, held{queue: m.Queue, group: groupKey(pod, m), role: m.Role, requests: queue.PodRequests(pod)})
}

func (s *state) forget(obj interface{}) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	s.mu.Lock()
	h, ok := s.held[pod.UID]
	if ok {
		s.dropLocked(pod.UID, h)
	}
	s.mu.Unlock()
	if ok {
		s.activateQueue(h.queue)
	}
}

func (s *state) set(uid types.UID, h held) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.held[uid]; ok {
		s.dropLocked(uid, old)
	}
	s.held[uid] = h
	if h.queue != "" {
		s.allocated[h.queue] = queue.Add(s.allocated[h.queue], h.requests)
	}
	if h.group != "" {
		if s.groupHeld[h.group] == nil {
			s.groupHeld[h.group] = map[string]int{}
		}
		s.groupHeld[h.group][h.role]++
	}
}

func (s *state) dropLocked(uid types.UID, h held) {
	delete(s.held, uid)
	if a := s.allocated[h.queue]; a != nil {
		queue.Sub(a, h.requests)
	}
	if roles := s.groupHeld[h.group]; roles != nil {
		if roles[h.role]--; roles[h.role] <= 0 {
			delete(roles, h.role)
		}
		if len(roles) == 0 {
			delete(s.groupHeld, h.group)
		}
	}
}

func groupKey(pod *corev1.Pod, m queue.Membership) string {
	if m.Group == "" {
		return ""
	}
	return pod.Namespace + "/" + m.Group
}

// logger is the logger of ctx.
func logger(ctx context.Context) klog.Logger { return klog.FromContext(ctx) }
