package jobs

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/accelstack/accelstack/pkg/ranktable"
)

// acceleratorResources are the whole-device accelerator resources; MIG
// devices (nvidia.com/mig-<profile>) are accelerators too.
var acceleratorResources = []corev1.ResourceName{"nvidia.com/gpu", "nvidia.com/gpu.shared", ranktable.AscendResource}

// IsAccelerator reports whether name is an accelerator resource.
func IsAccelerator(name corev1.ResourceName) bool {
	for _, a := range acceleratorResources {
		if name == a {
			return true
		}
	}
	return strings.HasPrefix(string(name), "nvidia.com/mig-")
}

// DropAccelerators removes accelerator requests and limits from pod's
// containers, as for a launcher derived from its workers' template: it
// runs the launcher, not the computation.
func DropAccelerators(pod *corev1.Pod) {
	for i := range pod.Spec.Containers {
		r := &pod.Spec.Containers[i].Resources
		for _, list := range []corev1.ResourceList{r.Limits, r.Requests} {
			for name := range list {
				if IsAccelerator(name) {
					delete(list, name)
				}
			}
		}
	}
}
