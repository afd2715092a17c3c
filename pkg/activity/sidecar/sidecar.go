// Package sidecar builds the activity sidecar's container and its access
// volume (the corev1 side of package activity) for the Notebook,
// TensorBoard and Explorer controllers. It is apart from package activity
// so that the sidecar binary, which needs only the contract, links no
// Kubernetes API types.
package sidecar

import (
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/accelstack/accelstack/pkg/activity"
)

// Container returns the activity sidecar container of a workload pod:
// image run with --upstream=http://127.0.0.1:<upstreamPort>, serving
// activity.HTTPPort (named activity.HTTPPortName) and activity.SSHPort
// (activity.SSHPortName). It is ready while the workload's port takes
// connections (activity.ReadyzPath), so that the pod's readiness is the
// workload's, even when the workload listens on the pod's loopback only,
// and live while it runs (activity.HealthzPath); the sidecar answers both
// itself, so that a probe is never a request to the workload. It runs
// non-root with a read-only root file system and no capabilities. When
// accessSecret is set, the sidecar mounts the volume AccessVolume of that
// Secret at activity.AccessTokenDir and requires its token of the requests
// it proxies (--access-token-file); the pod must have the volume.
func Container(image string, upstreamPort int32, accessSecret string) corev1.Container {
	probe := func(p string, period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: p, Port: intstr.FromString(activity.HTTPPortName)}},
			PeriodSeconds: period,
		}
	}
	args := []string{fmt.Sprintf("--upstream=http://127.0.0.1:%d", upstreamPort)}
	var mounts []corev1.VolumeMount
	if accessSecret != "" {
		args = append(args, "--access-token-file="+path.Join(activity.AccessTokenDir, activity.AccessTokenKey))
		mounts = []corev1.VolumeMount{{Name: activity.AccessVolumeName, MountPath: activity.AccessTokenDir, ReadOnly: true}}
	}
	return corev1.Container{
		Name:         activity.ContainerName,
		Image:        image,
		Args:         args,
		VolumeMounts: mounts,
		Ports: []corev1.ContainerPort{
			{Name: activity.HTTPPortName, ContainerPort: activity.HTTPPort, Protocol: corev1.ProtocolTCP},
			{Name: activity.SSHPortName, ContainerPort: activity.SSHPort, Protocol: corev1.ProtocolTCP},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		ReadinessProbe: probe(activity.ReadyzPath, 5),
		LivenessProbe:  probe(activity.HealthzPath, 20),
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			RunAsUser:                ptr.To[int64](activity.SidecarUser),
			RunAsGroup:               ptr.To[int64](activity.SidecarUser),
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
}

// AccessVolume returns the pod volume of the access Secret secretName that
// Container mounts: only its activity.AccessTokenKey, readable by the
// sidecar's user whatever the pod's fsGroup.
func AccessVolume(secretName string) corev1.Volume {
	return corev1.Volume{
		Name: activity.AccessVolumeName,
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  secretName,
			Items:       []corev1.KeyToPath{{Key: activity.AccessTokenKey, Path: activity.AccessTokenKey}},
			DefaultMode: ptr.To[int32](0o444),
		}},
	}
}
