package interactive

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/activity/sidecar"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// ServicePort is the port of the workloads' Services, which target the
// activity sidecar's activity.HTTPPort.
const ServicePort = 80

// Workload is a server run as a Deployment of one pod behind the activity
// sidecar, and its Service.
type Workload struct {
	// Namespace and Name of the Deployment and Service.
	Namespace, Name string
	// Labels of the Deployment, the Service and the pods; Selector, a
	// subset of them, selects the pods.
	Labels, Selector map[string]string
	// Suspend makes the Deployment's replicas 0.
	Suspend bool
	// Pod holds the server's containers and volumes; the sidecar is added.
	Pod corev1.PodSpec
	// UpstreamPort is the server's own port on the pod's loopback, which
	// the sidecar proxies to.
	UpstreamPort int32
	// ActivityImage runs the sidecar.
	ActivityImage string
	// Scheduler, when it names a T9k Scheduler queue, has the pod placed
	// by the T9k Scheduler in that queue.
	Scheduler *tensorstackv1beta1.SchedulePolicy
	// Owner is the workload the pod serves, whose queue grant the pod
	// carries (queue.CarryGrant).
	Owner metav1.Object
}

// Deployment returns the Deployment of w: one replica (none while
// suspended), replaced rather than rolled (a PVC may be ReadWriteOnce),
// without a service account token or service links, its sidecar requiring
// the token of the access Secret (AccessSecretName).
func (w Workload) Deployment() *appsv1.Deployment {
	replicas := int32(1)
	if w.Suspend {
		replicas = 0
	}
	podLabels := merge(w.Labels, nil)
	spec := *w.Pod.DeepCopy()
	if s := w.Scheduler; s != nil && s.T9kScheduler != nil {
		spec.SchedulerName = schedulerv1beta1.SchedulerName
		podLabels[schedulerv1beta1.QueueLabel] = s.T9kScheduler.Queue
	}
	access := AccessSecretName(w.Name)
	spec.Containers = append(spec.Containers, sidecar.Container(w.ActivityImage, w.UpstreamPort, access))
	spec.Volumes = append(spec.Volumes, sidecar.AccessVolume(access))
	spec.EnableServiceLinks = ptr.To(false)
	if spec.AutomountServiceAccountToken == nil {
		spec.AutomountServiceAccountToken = ptr.To(false)
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.SecurityContext.SeccompProfile == nil {
		spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, Labels: w.Labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: w.Selector},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: w.podAnnotations(podLabels)},
				Spec:       spec,
			},
		},
	}
}

// podAnnotations are the annotations of w's pod: the owner's grant of the
// pod's queue, if any.
func (w Workload) podAnnotations(podLabels map[string]string) map[string]string {
	if w.Owner == nil {
		return nil
	}
	return queue.CarryGrant(nil, w.Owner, podLabels[schedulerv1beta1.QueueLabel])
}

// Service returns the Service of w: port ServicePort to the sidecar's
// activity.HTTPPortName. It stays while the workload is suspended.
func (w Workload) Service() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, Labels: w.Labels},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: w.Selector,
			Ports: []corev1.ServicePort{{
				Name: activity.HTTPPortName, Port: ServicePort, TargetPort: intstr.FromString(activity.HTTPPortName), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

// ServerSecurityContext is the security context of a server container: no
// privilege escalation and no capabilities.
func ServerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// ValidateScheduler checks that a T9k Scheduler queue is named, as a
// label value, since it becomes the pod's queue label.
func ValidateScheduler(s *tensorstackv1beta1.SchedulePolicy, p *field.Path) field.ErrorList {
	if s == nil || s.T9kScheduler == nil {
		return nil
	}
	q, qp := s.T9kScheduler.Queue, p.Child("t9kScheduler", "queue")
	if q == "" {
		return field.ErrorList{field.Required(qp, "the queue of the T9k Scheduler")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsValidLabelValue(q) {
		errs = append(errs, field.Invalid(qp, q, msg))
	}
	return errs
}
