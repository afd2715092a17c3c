package explorer

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// User is the user and group the file browser and code-server run as:
// t9kuser of the platform's notebook images, so that files either writes
// in the PVC belong to the notebooks' user.
const User = 1000

// Volume names.
const (
	dataVolume  = "data"
	stateVolume = "state"
)

// fileBrowserDB is the file browser's database, on an emptyDir: a fresh
// one at each start is set up without authentication (--noauth).
const fileBrowserDB = "/var/lib/filebrowser/filebrowser.db"

// Resources returns the resources of the component's container.
func Resources(c Component) corev1.ResourceRequirements {
	if c == FileBrowser {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
		}
	}
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")},
	}
}

// workload returns the Deployment and Service of the component of ex on
// pvc. When pvc may be attached to one node only, the pod must run on the
// node of the Explorer's other pod.
func workload(ex *tensorstackv1beta1.Explorer, pvc *corev1.PersistentVolumeClaim, c Component, opts Options) interactive.Workload {
	name := ObjectName(ex.Name, c)
	selector := map[string]string{LabelKey: name}
	labels := interactive.AppLabels(appName, ex.Name, string(c))
	labels[LabelKey] = name
	labels[InstanceLabelKey] = InstanceName(ex.Name)

	ctr := corev1.Container{
		Name:            string(c),
		Resources:       Resources(c),
		SecurityContext: interactive.ServerSecurityContext(),
		VolumeMounts:    []corev1.VolumeMount{{Name: dataVolume, MountPath: MountPath}},
	}
	var port int32
	switch c {
	case FileBrowser:
		port = FileBrowserPort
		base := strings.TrimSuffix(URLPrefix(ex.Namespace, ex.Name, c), "/")
		ctr.Image = opts.FileBrowserImage
		ctr.Command = []string{"/filebrowser"}
		ctr.Args = []string{
			"--address=127.0.0.1",
			"--port=" + strconv.Itoa(FileBrowserPort),
			"--root=" + MountPath,
			"--baseurl=" + base,
			"--database=" + fileBrowserDB,
			"--noauth",
		}
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: stateVolume, MountPath: "/var/lib/filebrowser"})
	case CodeServer:
		port = CodeServerPort
		ctr.Image = opts.CodeServerImage
		// The image's entrypoint runs fixuid, a setuid program, which
		// fails without privilege escalation; dumb-init reaps the
		// terminal's processes.
		ctr.Command = []string{"/usr/bin/dumb-init", "/usr/bin/code-server"}
		ctr.Args = []string{
			"--bind-addr=127.0.0.1:" + strconv.Itoa(CodeServerPort),
			"--auth=none",
			"--disable-telemetry",
			"--disable-update-check",
			MountPath,
		}
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: stateVolume, MountPath: "/tmp"})
	}

	pod := corev1.PodSpec{
		Containers: []corev1.Container{ctr},
		Volumes: []corev1.Volume{
			{Name: dataVolume, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}},
			{Name: stateVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true),
			RunAsUser:    ptr.To[int64](User),
			RunAsGroup:   ptr.To[int64](User),
		},
	}
	if !sharedAccess(pvc) {
		pod.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{InstanceLabelKey: InstanceName(ex.Name)}},
				TopologyKey:   corev1.LabelHostname,
			}},
		}}
	}
	return interactive.Workload{
		Namespace:     ex.Namespace,
		Name:          name,
		Labels:        labels,
		Selector:      selector,
		Suspend:       ex.Spec.Suspend,
		Pod:           pod,
		UpstreamPort:  port,
		ActivityImage: opts.ActivityImage,
		Scheduler:     ex.Spec.Scheduler,
		Owner:         ex,
	}
}

// sharedAccess reports whether pods on several nodes may mount pvc.
func sharedAccess(pvc *corev1.PersistentVolumeClaim) bool {
	return slices.ContainsFunc(pvc.Spec.AccessModes, func(m corev1.PersistentVolumeAccessMode) bool {
		return m == corev1.ReadWriteMany || m == corev1.ReadOnlyMany
	})
}
