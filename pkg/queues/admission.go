package queues

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get

// admitter decides whether a queue takes a workload now, from live state:
// the queue and its PodGroups from the manager's cache, the namespace and
// the shape profiles read from the API server, and the allocation summed
// from the pods the queue holds in the pod cache (not the Queue's status,
// which may lag).
type admitter struct {
	// client reads Queues and PodGroups (cached) and the shapes ConfigMap
	// (not cached).
	client client.Reader
	// apiReader reads Namespaces and T9k Jobs.
	apiReader client.Reader
	members   *members
	// caches are the caches behind client and members, which the webhook
	// (served from the manager's start) waits for; nil in tests.
	caches []cache.Cache
}

// waitForCaches waits until the caches have synced, or ctx ends (the
// webhook's timeout).
func (a *admitter) waitForCaches(ctx context.Context) error {
	for _, c := range a.caches {
		if !c.WaitForCacheSync(ctx) {
			return errors.New("the queue caches have not synced yet")
		}
	}
	return nil
}

// admit decides whether queue name takes pods (each pod's requests) from
// namespace; granted says their creator holds the use of the queue
// (queue.Granted); checkQuota false skips the quota (for pods of a job the
// queue took as a whole). It returns nil when the queue takes them.
func (a *admitter) admit(ctx context.Context, name, namespace string, pods []corev1.ResourceList, granted, checkQuota bool) (*queue.Refusal, error) {
	q := &schedv1beta1.Queue{}
	if err := a.client.Get(ctx, client.ObjectKey{Name: name}, q); apierrors.IsNotFound(err) {
		q = nil
	} else if err != nil {
		return nil, fmt.Errorf("getting Queue %s: %w", name, err)
	}
	ns := &corev1.Namespace{}
	if err := a.apiReader.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return nil, fmt.Errorf("getting Namespace %s: %w", namespace, err)
	}
	w := queue.Workload{Namespace: ns, Pods: pods, Granted: granted}
	if q == nil || q.Spec.Closed {
		return queue.Admit(name, q, w, queue.State{}), nil
	}
	var st queue.State
	if p := q.Spec.ResourceShapeProfile; p != nil && *p != "" {
		st.Shapes, st.ShapesErr = a.shapes(ctx, *p)
	}
	if checkQuota && q.Spec.Quota != nil {
		held, _, err := a.members.queueMembers(ctx, name)
		if err != nil {
			return nil, err
		}
		st.Allocated = allocated(held)
	} else {
		q = q.DeepCopy()
		q.Spec.Quota = nil
	}
	return queue.Admit(name, q, w, st), nil
}

// errNoShapes says the shapes ConfigMap does not exist.
var errNoShapes = errors.New("ConfigMap t9k-system/resource-shapes does not exist")

// shapes reads profile from the ConfigMap of resource shapes.
func (a *admitter) shapes(ctx context.Context, profile string) ([]queue.Shape, error) {
	cm := &corev1.ConfigMap{}
	err := a.client.Get(ctx, client.ObjectKey{Namespace: schedv1beta1.ShapesNamespace, Name: schedv1beta1.ShapesConfigMap}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return nil, errNoShapes
	case err != nil:
		return nil, fmt.Errorf("reading ConfigMap t9k-system/resource-shapes: %w", err)
	}
	return queue.ParseShapes(cm.Data, profile)
}
