package notebook

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
)

// The ports of a Notebook's Services.
const (
	// HTTPServicePort is the port of the Service, to the sidecar's
	// activity.HTTPPort.
	HTTPServicePort = 80
	// SSHServicePort is the port of the SSH Service, to the sidecar's
	// activity.SSHPort.
	SSHServicePort = 22
)

// httpService returns the Service name of nb. Its port targets the
// sidecar's port by number: the template's containers may name a port
// "http" too.
func httpService(nb *tensorstackv1beta1.Notebook, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: nb.Namespace, Name: name, Labels: objectLabels(nb, name, "notebook")},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{NotebookLabelKey: name},
			Ports: []corev1.ServicePort{{
				Name: "http", Port: HTTPServicePort, TargetPort: intstr.FromInt32(activity.HTTPPort), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

// sshService returns the SSH Service of nb, whose pods the StatefulSet
// name runs: of spec.ssh.serviceType, ClusterIP by default.
func sshService(nb *tensorstackv1beta1.Notebook, name string) *corev1.Service {
	typ := corev1.ServiceTypeClusterIP
	if nb.Spec.SSH != nil && nb.Spec.SSH.ServiceType != "" {
		typ = nb.Spec.SSH.ServiceType
	}
	svcName := SSHServiceName(name)
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: nb.Namespace, Name: svcName, Labels: objectLabels(nb, name, "ssh")},
		Spec: corev1.ServiceSpec{
			Type:     typ,
			Selector: map[string]string{NotebookLabelKey: name},
			Ports: []corev1.ServicePort{{
				Name: "ssh", Port: SSHServicePort, TargetPort: intstr.FromInt32(activity.SSHPort), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}
