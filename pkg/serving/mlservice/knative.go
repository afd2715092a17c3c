package mlservice

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/accelstack/accelstack/pkg/interactive"
)

// +kubebuilder:rbac:groups=serving.knative.dev,resources=services,verbs=get;list;watch;create;update;delete

// KnativeServiceGVK is the kind of the Knative Services the knative
// backend writes.
var KnativeServiceGVK = schema.GroupVersionKind{Group: "serving.knative.dev", Version: "v1", Kind: "Service"}

// The Knative autoscaling annotations.
const (
	knativeMinScale = "autoscaling.knative.dev/min-scale"
	knativeMaxScale = "autoscaling.knative.dev/max-scale"
)

// knativeBackend runs components as Knative Services.
type knativeBackend struct {
	client client.Client
	scheme *runtime.Scheme
}

var _ Backend = (*knativeBackend)(nil)

// KnativeInstalled reports whether mapper knows the Knative Service kind.
func KnativeInstalled(mapper meta.RESTMapper) bool {
	_, err := mapper.RESTMapping(KnativeServiceGVK.GroupKind(), KnativeServiceGVK.Version)
	return err == nil
}

// Name is knative.
func (*knativeBackend) Name() string { return "knative" }

// Ensure creates or updates the Knative Service of c, all its traffic on
// the latest revision, and reads its state from its Ready condition.
func (b *knativeBackend) Ensure(ctx context.Context, owner client.Object, c Component) (ComponentState, error) {
	want, err := knativeService(owner.GetNamespace(), c)
	if err != nil {
		return ComponentState{}, err
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(KnativeServiceGVK)
	err = b.client.Get(ctx, client.ObjectKey{Namespace: owner.GetNamespace(), Name: c.Name}, got)
	switch {
	case apierrors.IsNotFound(err):
		if err := controllerutil.SetControllerReference(owner, want, b.scheme); err != nil {
			return ComponentState{}, fmt.Errorf("owning Knative Service %s: %w", c.Name, err)
		}
		if err := b.client.Create(ctx, want); err != nil {
			return ComponentState{}, fmt.Errorf("creating Knative Service %s: %w", c.Name, err)
		}
		return ComponentState{Reason: "Creating", Message: "The Knative Service is created", Target: serviceURL(c.Name, owner.GetNamespace())}, nil
	case err != nil:
		return ComponentState{}, fmt.Errorf("getting Knative Service %s: %w", c.Name, err)
	}
	if !metav1.IsControlledBy(got, owner) {
		return ComponentState{}, fmt.Errorf("the Knative Service %s %w", c.Name, interactive.ErrNotOwned)
	}
	if !equality.Semantic.DeepEqual(got.Object["spec"], want.Object["spec"]) || !equality.Semantic.DeepEqual(got.GetLabels(), want.GetLabels()) {
		got = got.DeepCopy()
		got.Object["spec"] = want.Object["spec"]
		got.SetLabels(want.GetLabels())
		if err := b.client.Update(ctx, got); err != nil {
			return ComponentState{}, fmt.Errorf("updating Knative Service %s: %w", c.Name, err)
		}
	}
	return knativeState(got, owner.GetNamespace()), nil
}

// knativeService returns the Knative Service of c.
func knativeService(ns string, c Component) (*unstructured.Unstructured, error) {
	tpl := c.Template.DeepCopy()
	tpl.Annotations = merge(tpl.Annotations, map[string]string{
		knativeMinScale: strconv.Itoa(int(c.MinReplicas)),
		knativeMaxScale: strconv.Itoa(int(max(c.MaxReplicas, c.MinReplicas))),
	})
	// Knative names the revision's pods; its webhook refuses a template
	// name.
	podSpec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tpl.Spec)
	if err != nil {
		return nil, fmt.Errorf("converting the pod of %s: %w", c.Name, err)
	}
	md := map[string]any{"labels": toAny(tpl.Labels), "annotations": toAny(tpl.Annotations)}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"template": map[string]any{"metadata": md, "spec": podSpec},
			"traffic":  []any{map[string]any{"latestRevision": true, "percent": int64(100)}},
		},
	}}
	u.SetGroupVersionKind(KnativeServiceGVK)
	u.SetNamespace(ns)
	u.SetName(c.Name)
	u.SetLabels(c.Labels)
	return u, nil
}

// toAny converts a string map for an unstructured object.
func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// knativeState reads the state of the Knative Service ksvc.
func knativeState(ksvc *unstructured.Unstructured, ns string) ComponentState {
	s := ComponentState{Reason: "Waiting", Message: "The Knative Service has no Ready condition yet", Target: serviceURL(ksvc.GetName(), ns)}
	if gen, _, _ := unstructured.NestedInt64(ksvc.Object, "status", "observedGeneration"); gen < ksvc.GetGeneration() {
		s.Message = "The Knative Service has not observed its latest spec yet"
		return s
	}
	conds, _, _ := unstructured.NestedSlice(ksvc.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Ready" {
			continue
		}
		s.Ready = m["status"] == string(corev1.ConditionTrue)
		s.Reason, _ = m["reason"].(string)
		s.Message, _ = m["message"].(string)
		if s.Ready {
			s.Reason, s.Message = "Ready", "The Knative Service is ready"
		}
	}
	s.URL, _, _ = unstructured.NestedString(ksvc.Object, "status", "url")
	if addr, _, _ := unstructured.NestedString(ksvc.Object, "status", "address", "url"); addr != "" {
		s.Target = addr
	}
	return s
}

// Prune deletes the Knative Services of owner not in keep.
func (b *knativeBackend) Prune(ctx context.Context, owner client.Object, keep map[string]bool) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(KnativeServiceGVK.GroupVersion().WithKind("ServiceList"))
	if err := b.client.List(ctx, list, client.InNamespace(owner.GetNamespace()), client.MatchingLabels{LabelKey: owner.GetName()}); err != nil {
		return fmt.Errorf("listing Knative Services: %w", err)
	}
	var errs []error
	for i := range list.Items {
		o := &list.Items[i]
		if keep[o.GetName()] || !metav1.IsControlledBy(o, owner) {
			continue
		}
		if err := b.client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting Knative Service %s: %w", o.GetName(), err))
		}
	}
	return errors.Join(errs...)
}
