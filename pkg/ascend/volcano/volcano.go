// Package volcano is the Ascend device plugin's Volcano mode: a chip
// picker (plugin.ChipPicker) that gives each Allocate the chips Volcano
// annotated on this node's oldest pending pod, and writes the chips given
// and the pod's HCCL rank-table entry (pkg/ascend/annotation) back to the
// pod. So in this mode Allocate waits, at most MaxWait, on a pod informer
// of its own and patches the pod through the API server (API, served by
// pkg/nodeclient in the plugin). Only the Ascend plugin's Registration
// (pkg/ascend/plugin) wires it in, for cmd/device-plugin; pkg/ascend and
// the node agent do not import it.
package volcano

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/ascend"
	"github.com/accelstack/accelstack/pkg/ascend/annotation"
)

// Pod annotations of the Volcano protocol. The pod's rank-table entry is
// written back too, under annotation.ConfigurationKey (Ascend910 only).
const (
	// AnnotationPredicateTimeKey is when Volcano chose the chips; among
	// pods created in the same second, the earliest is served first.
	AnnotationPredicateTimeKey = "predicate-time"
	// AnnotationRealKey is written back with the chips actually given.
	AnnotationRealKey = "huawei.com/AscendReal"
	// AnnotationKubeletDevicesKey is written back with the kubelet's IDs.
	AnnotationKubeletDevicesKey = "huawei.com/kltDev"
)

// MaxWait is the longest an Allocate waits for Volcano's pod.
const MaxWait = 3 * time.Second

// WriteTimeout bounds the patch that writes the chips back to the pod. It
// is apart from MaxWait: once the pod is found, giving up because a busy
// API server took longer than the wait's leftover fails the pod's
// admission for good (UnexpectedAdmissionError), while a late answer only
// delays it.
const WriteTimeout = 30 * time.Second

// DefaultSchedulerName is Volcano's scheduler name; only pods with it are
// served.
const DefaultSchedulerName = "volcano"

// API is what Volcano mode needs of the API server: this node and the pods
// bound to it. *nodeclient.Client serves it.
type API interface {
	GetNode(ctx context.Context, name string) (*corev1.Node, error)
	ListPods(ctx context.Context, opts metav1.ListOptions) (*corev1.PodList, error)
	WatchPods(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	PatchPod(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) error
}

// Options configure the Volcano chip picker.
type Options struct {
	// NodeName is this node; required.
	NodeName string
	// Client reaches the API server; required.
	Client API
	// Wait bounds how long an Allocate waits for the pod to appear in the
	// informer cache; 0 or more than MaxWait means MaxWait.
	Wait time.Duration
	// SchedulerName is the spec.schedulerName of the pods served; empty
	// means DefaultSchedulerName.
	SchedulerName string
}

// Picker is a plugin.ChipPicker serving Allocate from a pod informer of
// this node, started by Start and ended by Stop.
type Picker struct {
	opts Options

	mu sync.Mutex
	v  *volcano // nil when not started
}

// New checks the options and returns a picker that is not started yet.
func New(o Options) (*Picker, error) {
	if o.NodeName == "" || o.Client == nil {
		return nil, errors.New("volcano mode needs --node-name (or NODE_NAME) and a cluster connection")
	}
	if o.Wait <= 0 || o.Wait > MaxWait {
		o.Wait = MaxWait
	}
	if o.SchedulerName == "" {
		o.SchedulerName = DefaultSchedulerName
	}
	return &Picker{opts: o}, nil
}

// Start starts the informer of the node's pods, waits for its first sync
// and reads the node's address for the rank table.
func (p *Picker) Start(ctx context.Context) error {
	v, err := startVolcano(ctx, p.opts)
	if err != nil {
		return err
	}
	p.mu.Lock()
	old := p.v
	p.v = v
	p.mu.Unlock()
	if old != nil {
		old.stop()
	}
	return nil
}

// Stop ends the informer.
func (p *Picker) Stop() {
	p.mu.Lock()
	v := p.v
	p.v = nil
	p.mu.Unlock()
	if v != nil {
		v.stop()
	}
}

// PickChips finds the pod Volcano placed here for len(kubeletIDs) chips of
// resource, waiting at most the options' Wait for it to reach the cache,
// checks its chips with resolve, and writes the chips given and the
// rank-table entry back to the pod. The kubelet's IDs only give the count.
func (p *Picker) PickChips(ctx context.Context, resource string, kubeletIDs []string, resolve func([]string) ([]ascend.Chip, error)) ([]ascend.Chip, error) {
	p.mu.Lock()
	v := p.v
	p.mu.Unlock()
	if v == nil {
		return nil, status.Error(codes.Unavailable, "Volcano mode is not started")
	}
	return v.allocate(ctx, resource, kubeletIDs, resolve)
}

// volcano serves Allocate in Volcano mode from a node-local pod informer.
type volcano struct {
	client    API
	node      string
	scheduler string
	serverID  string
	wait      time.Duration
	lister    corelisters.PodLister
	cancel    context.CancelFunc
	done      chan struct{}
	changed   chan struct{}

	mu    sync.Mutex
	taken map[types.UID][]string // chips given to a pod, until the cache shows them or the pod is deleted
}

// startVolcano starts the informer of the node's pods and waits for its
// first sync, and reads the node's address for the rank table.
func startVolcano(ctx context.Context, o Options) (*volcano, error) {
	v := &volcano{client: o.Client, node: o.NodeName, scheduler: o.SchedulerName, serverID: o.NodeName, wait: o.Wait,
		changed: make(chan struct{}, 1), taken: map[types.UID][]string{}, done: make(chan struct{})}
	if n, err := o.Client.GetNode(ctx, o.NodeName); err == nil {
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				v.serverID = a.Address
				break
			}
		}
	} else {
		klog.FromContext(ctx).Error(err, "Reading this node's address; using the node name as server_id", "node", o.NodeName)
	}
	onNode := fields.OneTermEqualSelector("spec.nodeName", o.NodeName).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) {
			lo.FieldSelector = onNode
			return o.Client.ListPods(ctx, lo)
		},
		WatchFuncWithContext: func(ctx context.Context, lo metav1.ListOptions) (watch.Interface, error) {
			lo.FieldSelector = onNode
			return o.Client.WatchPods(ctx, lo)
		},
	}
	// A client that cannot stream lists (client-go's fake) says so.
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, o.Client),
		&corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	signal := func(any) {
		select {
		case v.changed <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: signal, UpdateFunc: func(_, n any) { signal(n) }, DeleteFunc: v.forget,
	}); err != nil {
		return nil, fmt.Errorf("watching pods: %w", err)
	}
	v.lister = corelisters.NewPodLister(inf.GetIndexer())
	ictx, cancel := context.WithCancel(context.Background())
	v.cancel = cancel
	go func() {
		defer close(v.done)
		inf.RunWithContext(ictx)
	}()
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	if !cache.WaitForCacheSync(sctx.Done(), inf.HasSynced) {
		v.stop()
		return nil, fmt.Errorf("syncing the pods of node %s: %w", o.NodeName, sctx.Err())
	}
	return v, nil
}

func (v *volcano) stop() {
	v.cancel()
	<-v.done
}

// forget drops what was given to a deleted pod.
func (v *volcano) forget(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	v.mu.Lock()
	delete(v.taken, p.UID)
	v.mu.Unlock()
}

// candidate is a pending pod with a Volcano annotation.
type candidate struct {
	pod *corev1.Pod
	ids []string
	err error
	// inUse is a chip of ids already given to another pod of the node.
	inUse string
}

// candidates returns this node's pending, not yet served pods that
// Volcano placed for resource, oldest first: created earlier, then
// chosen earlier (predicate-time), then by name. Pods of another
// scheduler, or that do not ask for resource in their limits, are not
// candidates: anyone who can create a pod can write its annotations.
func (v *volcano) candidates(resource string) ([]candidate, error) {
	pods, err := v.lister.List(labelsEverything)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	inUse := v.chipsInUse(pods, resource)
	var out []candidate
	for _, p := range pods {
		ann, ok := p.Annotations[resource]
		if !ok || p.Status.Phase != corev1.PodPending || p.DeletionTimestamp != nil || p.Spec.NodeName != v.node ||
			p.Spec.SchedulerName != v.scheduler || requested(p, resource) == 0 {
			continue
		}
		if _, done := p.Annotations[AnnotationRealKey]; done {
			continue
		}
		if _, taken := v.taken[p.UID]; taken {
			continue
		}
		c := candidate{pod: p}
		c.ids, c.err = parseAnnotation(ann)
		for _, id := range c.ids {
			if inUse[id] {
				c.inUse = id
				break
			}
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return older(out[i].pod, out[j].pod) })
	return out, nil
}

// chipsInUse returns the chips of resource given to this node's pods that
// have not terminated: those in their AscendReal annotation, and those
// just given (v.taken) that the cache does not show yet. It drops the
// taken entries the cache now shows, or whose pod is gone. v.mu is held.
func (v *volcano) chipsInUse(pods []*corev1.Pod, resource string) map[string]bool {
	inUse := map[string]bool{}
	seen := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		seen[p.UID] = true
		given, done := p.Annotations[AnnotationRealKey]
		if done {
			delete(v.taken, p.UID)
		}
		if !done || p.Spec.NodeName != v.node || requested(p, resource) == 0 ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, id := range strings.Split(given, ",") {
			inUse[strings.TrimSpace(id)] = true
		}
	}
	for uid, ids := range v.taken {
		if !seen[uid] {
			delete(v.taken, uid)
			continue
		}
		for _, id := range ids {
			inUse[id] = true
		}
	}
	return inUse
}

// requested is how many of resource the pod's containers ask for in
// their limits.
func requested(p *corev1.Pod, resource string) int64 {
	var n int64
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Limits[corev1.ResourceName(resource)]; ok {
			n += q.Value()
		}
	}
	return n
}

// older orders pods by creation, then by Volcano's predicate-time, then by
// namespace and name. predicate-time only breaks ties: a pod's own
// annotation must not put it ahead of pods created before it.
func older(a, b *corev1.Pod) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	ta, errA := strconv.ParseInt(a.Annotations[AnnotationPredicateTimeKey], 10, 64)
	tb, errB := strconv.ParseInt(b.Annotations[AnnotationPredicateTimeKey], 10, 64)
	switch {
	case errA == nil && errB == nil && ta != tb:
		return ta < tb
	case (errA == nil) != (errB == nil):
		return errA == nil
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// parseAnnotation splits "Ascend910-0,Ascend910-3".
func parseAnnotation(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty chip list")
	}
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		kind, num, ok := strings.Cut(f, "-")
		if !ok || kind == "" {
			return nil, fmt.Errorf("chip %q is not <kind>-<physical ID>", f)
		}
		if _, err := strconv.ParseUint(num, 10, 16); err != nil {
			return nil, fmt.Errorf("chip %q is not <kind>-<physical ID>", f)
		}
		out = append(out, f)
	}
	return out, nil
}

// allocate finds the pod Volcano placed here for len(ids) chips, waiting
// at most v.wait for it to reach the cache, checks its chips, and writes
// the real chips and the rank-table entry back to the pod, taking at most
// WriteTimeout for that.
func (v *volcano) allocate(parent context.Context, resource string, ids []string, resolve func([]string) ([]ascend.Chip, error)) ([]ascend.Chip, error) {
	ctx, cancel := context.WithTimeout(parent, v.wait)
	defer cancel()
	logger := klog.FromContext(ctx)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	skipped := map[types.UID]bool{}
	for {
		cands, err := v.candidates(resource)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "listing pods of node %s: %v", v.node, err)
		}
		for _, c := range cands {
			if c.err != nil {
				return nil, status.Errorf(codes.InvalidArgument, "pod %s/%s: malformed %s annotation: %v", c.pod.Namespace, c.pod.Name, resource, c.err)
			}
			if len(c.ids) != len(ids) {
				continue
			}
			if c.inUse != "" {
				if !skipped[c.pod.UID] {
					skipped[c.pod.UID] = true
					logger.Info("Skipping pod: its annotation names a chip already given to another pod", "pod", klog.KObj(c.pod), "chip", c.inUse)
				}
				continue
			}
			chips, err := resolve(c.ids)
			if err != nil {
				return nil, status.Errorf(status.Code(err), "pod %s/%s: %s", c.pod.Namespace, c.pod.Name, status.Convert(err).Message())
			}
			wctx, wcancel := context.WithTimeout(parent, WriteTimeout)
			err = v.writeBack(wctx, c.pod, resource, chips, ids)
			wcancel()
			if err != nil {
				return nil, err
			}
			logger.Info("Allocated Volcano-chosen NPUs", "pod", klog.KObj(c.pod), "devices", c.ids)
			return chips, nil
		}
		select {
		case <-ctx.Done():
			return nil, status.Errorf(codes.NotFound, "no pending pod on node %s annotated with %d %s chips within %s (Volcano mode)", v.node, len(ids), resource, v.wait)
		case <-v.changed:
		case <-tick.C:
		}
	}
}

// writeBack patches the pod's annotations.
func (v *volcano) writeBack(ctx context.Context, pod *corev1.Pod, resource string, chips []ascend.Chip, kubeletIDs []string) error {
	given := make([]string, len(chips))
	conf := annotation.PodConfiguration{PodName: pod.Name, ServerID: v.serverID}
	for i, c := range chips {
		given[i] = c.ID()
		conf.Devices = append(conf.Devices, annotation.DeviceConfig{DeviceID: strconv.Itoa(c.PhyID), DeviceIP: c.IP})
	}
	ann := map[string]string{
		AnnotationRealKey:           strings.Join(given, ","),
		AnnotationKubeletDevicesKey: strings.Join(kubeletIDs, ","),
	}
	if resource == accelerator.Ascend910 {
		b, err := json.Marshal(conf)
		if err != nil {
			return status.Errorf(codes.Internal, "encoding rank table entry: %v", err)
		}
		ann[annotation.ConfigurationKey] = string(b)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if err != nil {
		return status.Errorf(codes.Internal, "encoding patch: %v", err)
	}
	v.mu.Lock()
	v.taken[pod.UID] = given
	v.mu.Unlock()
	if err := v.client.PatchPod(ctx, pod.Namespace, pod.Name, types.MergePatchType, patch); err != nil {
		v.mu.Lock()
		delete(v.taken, pod.UID)
		v.mu.Unlock()
		return status.Errorf(codes.Unavailable, "annotating pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	return nil
}

var labelsEverything = labels.Everything()
