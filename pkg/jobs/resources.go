package jobs

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

// DropAccelerators removes accelerator requests and limits
// (accelerator.IsAccelerator) from pod's containers, as for a launcher
// derived from its workers' template: it runs the launcher, not the
// computation.
func DropAccelerators(pod *corev1.Pod) {
	for i := range pod.Spec.Containers {
		r := &pod.Spec.Containers[i].Resources
		for _, list := range []corev1.ResourceList{r.Limits, r.Requests} {
			for name := range list {
				if accelerator.IsAccelerator(string(name)) {
					delete(list, name)
				}
			}
		}
	}
}
