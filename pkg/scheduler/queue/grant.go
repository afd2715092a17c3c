package queue

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

// Granted reports whether obj carries the grant of queue name: its creator
// held the use of the queue (schedv1beta1.QueueGrantAnnotation).
func Granted(obj metav1.Object, name string) bool {
	return name != "" && obj.GetAnnotations()[schedv1beta1.QueueGrantAnnotation] == name
}

// CarryGrant returns annotations, of a pod or pod template the controllers
// make for owner in queue name, with owner's grant of that queue when it
// has one and without any grant otherwise: a grant in a user's template is
// never carried, only the one the admission policy checked on the owner.
// name "" (a pod in no queue) carries none.
func CarryGrant(annotations map[string]string, owner metav1.Object, name string) map[string]string {
	if !Granted(owner, name) {
		delete(annotations, schedv1beta1.QueueGrantAnnotation)
		return annotations
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[schedv1beta1.QueueGrantAnnotation] = name
	return annotations
}
