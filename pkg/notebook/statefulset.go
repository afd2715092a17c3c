package notebook

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	activitysidecar "github.com/accelstack/accelstack/pkg/activity/sidecar"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// The ports the notebook servers listen on in the pod, which the activity
// sidecar proxies to.
const (
	JupyterPort = 8888
	RStudioPort = 8787
)

// NBPrefixEnv is the environment variable of the notebook container that
// holds the URL path its server serves under (Kubeflow's notebook images
// pass it to Jupyter as the base URL).
const NBPrefixEnv = "NB_PREFIX"

// The notebook images' user (t9kuser), whose group becomes the pod's
// fsGroup when the template sets none, so that a fresh PVC mounted at
// /t9k/mnt is writable.
const notebookGroup = 1000

// SSHKeysDir is where the notebook container finds the authorized public
// keys, read-only, one file per Secret named after it. The image's sshd,
// or its entrypoint (copying them into ~/.ssh/authorized_keys), reads
// them; kubelet updates the files when a Secret changes.
const SSHKeysDir = "/t9k/ssh/authorized_keys.d"

// sshKeysVolume is the name of the volume of the authorized keys.
const sshKeysVolume = "t9k-ssh-authorized-keys"

// notebookPortName names the notebook container's port when the template
// declares none for it.
const notebookPortName = "notebook"

// UpstreamPort returns the port the notebook of type t serves on.
func UpstreamPort(t tensorstackv1beta1.NotebookType) int32 {
	if t == tensorstackv1beta1.NotebookRStudio {
		return RStudioPort
	}
	return JupyterPort
}

// statefulSet returns the StatefulSet name of nb, running the sidecar
// image, with the public keys of the Secrets keys mounted when SSH is
// enabled.
func statefulSet(nb *tensorstackv1beta1.Notebook, name, image string, keys []string) *appsv1.StatefulSet {
	replicas := int32(1)
	if nb.Spec.Suspended() {
		replicas = 0
	}
	labels := objectLabels(nb, name, "notebook")
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: nb.Namespace, Name: name, Labels: labels},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{NotebookLabelKey: name}},
			// With one pod there is no order to keep, and a pod that never
			// became ready does not block the next template.
			PodManagementPolicy:  appsv1.ParallelPodManagement,
			RevisionHistoryLimit: ptr.To[int32](2),
			Template:             podTemplate(nb, name, labels, image, keys),
		},
	}
}

// podTemplate returns the pod template of nb, whose StatefulSet is name:
// its pod spec with the defaults, the scheduler, the authorized keys and
// the sidecar, which requires the token of the access Secret. The main
// container (NotebookSpec.MainContainer) gets NB_PREFIX, the server's port
// and the keys.
func podTemplate(nb *tensorstackv1beta1.Notebook, name string, labels map[string]string, image string, keys []string) corev1.PodTemplateSpec {
	podLabels := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		podLabels[k] = v
	}
	spec := *nb.Spec.Template.Spec.DeepCopy()
	// A StatefulSet's pods restart; the server runs until suspended.
	spec.RestartPolicy = corev1.RestartPolicyAlways
	if s := nb.Spec.Scheduler; s != nil && s.T9kScheduler != nil {
		spec.SchedulerName = schedulerv1beta1.SchedulerName
		podLabels[schedulerv1beta1.QueueLabel] = s.T9kScheduler.Queue
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.SecurityContext.FSGroup == nil {
		spec.SecurityContext.FSGroup = ptr.To[int64](notebookGroup)
		if spec.SecurityContext.FSGroupChangePolicy == nil {
			// Change the group of a volume's files only when its root
			// has another: a big PVC is not walked at every start.
			spec.SecurityContext.FSGroupChangePolicy = ptr.To(corev1.FSGroupChangeOnRootMismatch)
		}
	}
	port := UpstreamPort(nb.Spec.Type)
	withKeys := nb.Spec.SSH != nil && nb.Spec.SSH.Enabled && len(keys) > 0
	main := nb.Spec.MainContainer()
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if c.Name != main {
			continue
		}
		if !hasEnv(c.Env, NBPrefixEnv) {
			c.Env = append(c.Env, corev1.EnvVar{Name: NBPrefixEnv, Value: strings.TrimSuffix(URLPrefix(nb.Namespace, nb.Name), "/")})
		}
		if !hasPort(c.Ports, port) {
			c.Ports = append(c.Ports, corev1.ContainerPort{Name: notebookPortName, ContainerPort: port, Protocol: corev1.ProtocolTCP})
		}
		if withKeys {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: sshKeysVolume, MountPath: SSHKeysDir, ReadOnly: true})
		}
	}
	if withKeys {
		spec.Volumes = append(spec.Volumes, keysVolume(keys))
	}
	access := interactive.AccessSecretName(name)
	spec.Containers = append(spec.Containers, sidecar(image, port, access))
	spec.Volumes = append(spec.Volumes, activitysidecar.AccessVolume(access))
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels: podLabels,
			// kubectl exec and logs go to the notebook, not the sidecar.
			Annotations: queue.CarryGrant(map[string]string{"kubectl.kubernetes.io/default-container": main}, nb, podLabels[schedulerv1beta1.QueueLabel]),
		},
		Spec: spec,
	}
}

// sidecar returns the activity sidecar in front of port, ready once the
// server takes connections there, so that the pod's readiness is the
// server's, requiring the token of the Secret access.
func sidecar(image string, port int32, access string) corev1.Container {
	c := activitysidecar.Container(image, port, access)
	if c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil {
		c.ReadinessProbe.HTTPGet.Path = activity.ReadyzPath
		c.ReadinessProbe.PeriodSeconds = 5
	}
	if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil {
		c.LivenessProbe.HTTPGet.Path = activity.HealthzPath
	}
	return c
}

// keysVolume returns the projected volume of the public keys of the
// Secrets keys: only their SSHPublicKeyKey, each at a file of the
// Secret's name, readable by all (sshd wants no group or world write).
func keysVolume(keys []string) corev1.Volume {
	sources := make([]corev1.VolumeProjection, 0, len(keys))
	for _, k := range keys {
		sources = append(sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: k},
			Items:                []corev1.KeyToPath{{Key: SSHPublicKeyKey, Path: k}},
		}})
	}
	return corev1.Volume{
		Name: sshKeysVolume,
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources:     sources,
			DefaultMode: ptr.To[int32](0o444),
		}},
	}
}

func hasEnv(env []corev1.EnvVar, name string) bool {
	for _, e := range env {
		if e.Name == name {
			return true
		}
	}
	return false
}

func hasPort(ports []corev1.ContainerPort, port int32) bool {
	for _, p := range ports {
		if p.ContainerPort == port || p.Name == notebookPortName {
			return true
		}
	}
	return false
}
