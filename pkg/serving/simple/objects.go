package simple

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
	"github.com/accelstack/accelstack/pkg/serving"
)

// LabelKey labels the Deployment, Service and pods of a SimpleMLService
// with its name.
const LabelKey = "tensorstack.dev/simplemlservice"

// The ports of the model servers.
const (
	// HTTPPort is the REST port of TF Serving and TorchServe, and the port
	// the default Service targets.
	HTTPPort = 8080
	// GRPCPort is TF Serving's gRPC port.
	GRPCPort = 9090
	// ServicePort is the default Service's port.
	ServicePort = 80
)

// labels returns the labels of the objects of s.
func labels(s *tensorstackv1beta1.SimpleMLService) map[string]string {
	return map[string]string{LabelKey: s.Name}
}

// podSpec returns the server pod of s, its model storage applied with the
// storage initializer run from image.
func podSpec(s *tensorstackv1beta1.SimpleMLService, image string) corev1.PodSpec {
	mountPath := s.Spec.Storage.MountPath()
	var spec corev1.PodSpec
	switch {
	case s.Spec.TensorFlow != nil:
		spec.Containers = []corev1.Container{{
			Name:    tensorstackv1beta1.SimpleMLServiceContainer,
			Image:   s.Spec.TensorFlow.Image,
			Command: []string{"/usr/bin/tensorflow_model_server"},
			// The name is a DNS label and the path a validated absolute
			// path (CRD validation).
			Args: []string{
				"--port=9090", "--rest_api_port=8080",
				"--model_name=" + s.Name, "--model_base_path=" + mountPath,
			},
			Ports: []corev1.ContainerPort{
				{Name: "http", ContainerPort: HTTPPort, Protocol: corev1.ProtocolTCP},
				{Name: "grpc", ContainerPort: GRPCPort, Protocol: corev1.ProtocolTCP},
			},
			Resources: s.Spec.TensorFlow.Resources,
		}}
	case s.Spec.PyTorch != nil:
		args := []string{"--start", "--model-store=" + mountPath}
		if f := strings.Fields(s.Spec.PyTorch.ModelsFlag); len(f) > 0 {
			args = append(append(args, "--models"), f...)
		}
		spec.Containers = []corev1.Container{{
			Name:      tensorstackv1beta1.SimpleMLServiceContainer,
			Image:     s.Spec.PyTorch.Image,
			Command:   []string{"torchserve"},
			Args:      args,
			Ports:     []corev1.ContainerPort{{Name: "http", ContainerPort: HTTPPort, Protocol: corev1.ProtocolTCP}},
			Resources: s.Spec.PyTorch.Resources,
		}}
	case s.Spec.Custom != nil:
		spec = *s.Spec.Custom.Spec.DeepCopy()
	}
	serving.ApplyStorage(&spec, s.Spec.Storage, image)
	if spec.AutomountServiceAccountToken == nil {
		spec.AutomountServiceAccountToken = ptr.To(false)
	}
	return spec
}

// deployment returns the Deployment of s.
func deployment(s *tensorstackv1beta1.SimpleMLService, image string) *appsv1.Deployment {
	podLabels := labels(s)
	spec := podSpec(s, image)
	if sp := s.Spec.Scheduler; sp != nil && sp.T9kScheduler != nil {
		spec.SchedulerName = schedulerv1beta1.SchedulerName
		podLabels[schedulerv1beta1.QueueLabel] = sp.T9kScheduler.Queue
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: labels(s)},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(ptr.Deref(s.Spec.Replicas, 1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels(s)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: queue.CarryGrant(nil, s, podLabels[schedulerv1beta1.QueueLabel])},
				Spec:       spec,
			},
		},
	}
	if s.Spec.Strategy != nil {
		dep.Spec.Strategy = *s.Spec.Strategy.DeepCopy()
	}
	return dep
}

// service returns the Service of s: spec.service's ports and type, or
// port 80 to the pods' 8080/TCP.
func service(s *tensorstackv1beta1.SimpleMLService) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: labels(s)},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: labels(s),
			Ports: []corev1.ServicePort{{
				Name: "http", Port: ServicePort, TargetPort: intstr.FromInt32(HTTPPort), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
	if o := s.Spec.Service; o != nil {
		if len(o.Ports) > 0 {
			svc.Spec.Ports = make([]corev1.ServicePort, len(o.Ports))
			for i, p := range o.Ports {
				p.DeepCopyInto(&svc.Spec.Ports[i])
				if p.Protocol == "" {
					svc.Spec.Ports[i].Protocol = corev1.ProtocolTCP
				}
			}
		}
		if o.Type != "" {
			svc.Spec.Type = o.Type
		}
	}
	return svc
}

// address returns the address of s behind svc.
func address(svc *corev1.Service) *tensorstackv1beta1.SimpleMLServiceAddress {
	a := &tensorstackv1beta1.SimpleMLServiceAddress{URL: svc.Name + "." + svc.Namespace + ".svc.cluster.local"}
	for _, p := range svc.Spec.Ports {
		a.Ports = append(a.Ports, tensorstackv1beta1.AddressPort{Port: p.Port, NodePort: p.NodePort, Protocol: p.Protocol})
	}
	return a
}
