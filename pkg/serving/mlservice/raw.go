package mlservice

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/serving"
)

// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;update;delete

// HPATargetCPU is the average CPU utilization, in percent of the
// requests, the raw backend's autoscalers aim at.
const HPATargetCPU = 80

// rawBackend runs components as Deployments, Services and HPAs.
type rawBackend struct {
	writer interactive.Writer
}

var _ Backend = (*rawBackend)(nil)

// Name is raw.
func (*rawBackend) Name() string { return "raw" }

// Ensure makes the Deployment, the headless Service <name>-private and,
// when the replicas may vary, the HPA of c.
func (b *rawBackend) Ensure(ctx context.Context, owner client.Object, c Component) (ComponentState, error) {
	replicas := max(c.MinReplicas, 1) // an HPA cannot scale to zero
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: c.Name, Labels: c.Labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: c.Labels},
			Template: c.Template,
		},
	}
	got, _, err := b.writer.EnsureDeployment(ctx, owner, dep)
	if err != nil {
		return ComponentState{}, err
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: privateName(c.Name), Labels: c.Labels},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  c.Labels,
			Ports:     []corev1.ServicePort{{Name: "http", Port: ServingPort, TargetPort: intstr.FromInt32(ServingPort), Protocol: corev1.ProtocolTCP}},
		},
	}
	replaced, err := b.replaceClusterIP(ctx, owner, svc)
	if err != nil {
		return ComponentState{}, err
	}
	if !replaced { // else its deletion's event brings the next reconcile
		if _, _, err := b.writer.EnsureService(ctx, owner, svc); err != nil {
			return ComponentState{}, err
		}
	}
	if err := b.ensureHPA(ctx, owner, c, replicas); err != nil {
		return ComponentState{}, err
	}
	rep := serving.DeploymentReplicas(got)
	return ComponentState{
		Ready: rep.Ready, ReadyReplicas: rep.ReadyReplicas, TotalReplicas: rep.TotalReplicas, Reason: rep.Reason, Message: rep.Message,
		Target: privateURL(c.Name, svc.Namespace),
	}, nil
}

// replaceClusterIP deletes want's Service, and says so, when owner
// controls it and it has a cluster IP, so that it is created again headless: the cluster IP
// of a Service cannot change, and the router reaches the pods by their
// own addresses, with no kube-proxy in the way.
func (b *rawBackend) replaceClusterIP(ctx context.Context, owner client.Object, want *corev1.Service) (bool, error) {
	got := &corev1.Service{}
	err := b.writer.Reader.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("getting Service %s: %w", want.Name, err)
	}
	if got.Spec.ClusterIP == corev1.ClusterIPNone || got.Spec.ClusterIP == "" || !metav1.IsControlledBy(got, owner) {
		return false, nil
	}
	if err := b.writer.Client.Delete(ctx, got, client.Preconditions{UID: &got.UID}); client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("deleting Service %s to make it headless: %w", want.Name, err)
	}
	return true, nil
}

// ensureHPA creates or updates the HPA of c when maxReplicas exceeds its
// replicas, and deletes it otherwise (a fixed number of pods).
func (b *rawBackend) ensureHPA(ctx context.Context, owner client.Object, c Component, minReplicas int32) error {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: c.Name}}
	err := b.writer.Reader.Get(ctx, client.ObjectKeyFromObject(hpa), hpa)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("getting HPA %s: %w", c.Name, err)
	}
	exists := err == nil
	if c.MaxReplicas <= minReplicas {
		if exists {
			return client.IgnoreNotFound(b.writer.Client.Delete(ctx, hpa))
		}
		return nil
	}
	spec := autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: c.Name},
		MinReplicas:    ptr.To(minReplicas),
		MaxReplicas:    c.MaxReplicas,
		Metrics: []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name:   corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](HPATargetCPU)},
			},
		}},
	}
	if !exists {
		hpa.Labels, hpa.Spec = c.Labels, spec
		if err := controllerutil.SetControllerReference(owner, hpa, b.writer.Scheme); err != nil {
			return fmt.Errorf("owning HPA %s: %w", c.Name, err)
		}
		if err := b.writer.Client.Create(ctx, hpa); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating HPA %s: %w", c.Name, err)
		}
		return nil
	}
	if !metav1.IsControlledBy(hpa, owner) {
		return fmt.Errorf("the HPA %s %w", c.Name, interactive.ErrNotOwned)
	}
	if equality.Semantic.DeepEqual(hpa.Spec, spec) {
		return nil
	}
	hpa = hpa.DeepCopy()
	hpa.Spec = spec
	if err := b.writer.Client.Update(ctx, hpa); err != nil {
		return fmt.Errorf("updating HPA %s: %w", c.Name, err)
	}
	return nil
}

// Prune deletes the Deployments, Services and HPAs of owner's predictors
// and transformer not in keep; the router's objects are left alone.
func (b *rawBackend) Prune(ctx context.Context, owner client.Object, keep map[string]bool) error {
	keepPrivate := make(map[string]bool, len(keep))
	for name, k := range keep {
		keepPrivate[privateName(name)] = k
	}
	return pruneRaw(ctx, b.writer, owner, func(o client.Object) bool {
		if o.GetLabels()[ComponentLabelKey] == componentRouter {
			return true
		}
		if _, ok := o.(*corev1.Service); ok {
			return keepPrivate[o.GetName()]
		}
		return keep[o.GetName()]
	})
}

// pruneRaw deletes the Deployments, Services and HPAs labelled with
// owner's name, controlled by it, for which keep is false.
func pruneRaw(ctx context.Context, w interactive.Writer, owner client.Object, keep func(client.Object) bool) error {
	sel := client.MatchingLabels{LabelKey: owner.GetName()}
	ns := client.InNamespace(owner.GetNamespace())
	var errs []error
	for _, list := range []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ServiceList{}, &autoscalingv2.HorizontalPodAutoscalerList{}} {
		if err := w.Reader.List(ctx, list, ns, sel); err != nil {
			return fmt.Errorf("listing the objects of %s: %w", owner.GetName(), err)
		}
		objs, err := items(list)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if keep(o) || !metav1.IsControlledBy(o, owner) {
				continue
			}
			if err := w.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("deleting %s: %w", o.GetName(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// items returns the items of list.
func items(list client.ObjectList) ([]client.Object, error) {
	var out []client.Object
	switch l := list.(type) {
	case *appsv1.DeploymentList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *corev1.ServiceList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *autoscalingv2.HorizontalPodAutoscalerList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	default:
		return nil, fmt.Errorf("unexpected list %T", list)
	}
	return out, nil
}
