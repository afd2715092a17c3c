package jobs

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// DefaultDebugCommand is what a replica's main container runs in debug mode
// unless its debug setting says otherwise.
var DefaultDebugCommand = []string{"sleep", "inf"}

// MainContainer returns the main container of pod: the one named name, or
// else the first; nil when the pod has none.
func MainContainer(spec *corev1.PodSpec, name string) *corev1.Container {
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	if len(spec.Containers) == 0 {
		return nil
	}
	return &spec.Containers[0]
}

// mainContainerName returns the name of pod's main container.
func mainContainerName(pod *corev1.Pod, name string) string {
	if c := MainContainer(&pod.Spec, name); c != nil {
		return c.Name
	}
	return name
}

// SetEnv adds the variable name=value to container c unless c sets name
// already: what the user wrote wins.
func SetEnv(c *corev1.Container, name, value string) {
	for _, e := range c.Env {
		if e.Name == name {
			return
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
}

// SetEnvAll adds the variables to every container of pod, in order.
func SetEnvAll(pod *corev1.Pod, vars ...corev1.EnvVar) {
	for i := range pod.Spec.Containers {
		for _, v := range vars {
			SetEnv(&pod.Spec.Containers[i], v.Name, v.Value)
		}
	}
}

// ContainerPort returns the port named name of container c, or def.
func ContainerPort(c *corev1.Container, name string, def int32) int32 {
	if c != nil {
		for _, p := range c.Ports {
			if p.Name == name {
				return p.ContainerPort
			}
		}
	}
	return def
}

// resumed reports whether the job has been paused and resumed since it
// started: its pods are then created as pause.resumeSpecs says.
func resumed(job *Job) bool {
	return Condition(job.Status, batchv1beta1.JobPausedCond) != nil
}

// newPod returns the pod of replica r, rank rank, of job: the template with
// the run mode's changes, the kind's decoration and the engine's labels,
// scheduling and owner. It returns the kind's notes.
func newPod(kind Kind, job *Job, r *Replica, rank int32, scheme *runtime.Scheme) (*corev1.Pod, []string, error) {
	obj := job.Object
	name := r.PodName(obj.GetName(), rank)
	tmpl := r.Template.DeepCopy()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   obj.GetNamespace(),
			Labels:      tmpl.Labels,
			Annotations: tmpl.Annotations,
		},
		Spec: tmpl.Spec,
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	for k, v := range ReplicaLabels(kind.Component(), obj.GetName(), r, rank) {
		pod.Labels[k] = v
	}
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever

	if resumed(job) && job.RunMode != nil && job.RunMode.Pause != nil {
		for _, rs := range job.RunMode.Pause.ResumeSpecs {
			if rs.Type != r.Type {
				continue
			}
			if rs.SkipInitContainer {
				pod.Spec.InitContainers = nil
			}
			if c := MainContainer(&pod.Spec, r.MainContainer); c != nil {
				// Copies: the kind rewrites them in place.
				if rs.Command != nil {
					c.Command = append([]string(nil), rs.Command...)
				}
				if rs.Args != nil {
					c.Args = append([]string(nil), rs.Args...)
				}
			}
		}
	}

	notes := kind.Decorate(pod, r, rank, job)

	if job.RunMode != nil && job.RunMode.Debug != nil && job.RunMode.Debug.Enabled {
		command, skipInit := DefaultDebugCommand, false
		if r.DebugCommand != nil {
			command = r.DebugCommand
		}
		for _, d := range job.RunMode.Debug.ReplicaSpecs {
			if d.Type == r.Type {
				skipInit = d.SkipInitContainer
				if len(d.Command) > 0 {
					command = d.Command
				}
			}
		}
		if skipInit {
			pod.Spec.InitContainers = nil
		}
		if c := MainContainer(&pod.Spec, r.MainContainer); c != nil {
			c.Command, c.Args = append([]string(nil), command...), nil
		}
	}

	if s := job.Scheduler; s != nil && s.T9kScheduler != nil {
		pod.Spec.SchedulerName = SchedulerName
		pod.Labels[GroupNameLabel] = obj.GetName()
		pod.Labels[QueueLabel] = s.T9kScheduler.Queue
		pod.Labels[RoleLabel] = r.Type
	}
	pod.Annotations = queue.CarryGrant(pod.Annotations, obj, pod.Labels[QueueLabel])
	decorateAscend(pod, obj.GetName())
	if err := SetOwner(obj, pod, scheme); err != nil {
		return nil, nil, err
	}
	return pod, notes, nil
}

// SetOwner makes job the controlling owner of o.
func SetOwner(job client.Object, o client.Object, scheme *runtime.Scheme) error {
	gvk, err := apiutil.GVKForObject(job, scheme)
	if err != nil {
		return err
	}
	o.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion:         gvk.GroupVersion().String(),
		Kind:               gvk.Kind,
		Name:               job.GetName(),
		UID:                job.GetUID(),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}})
	return nil
}

// OwnedBy reports whether job is the controlling owner of o.
func OwnedBy(o, job client.Object) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.UID == job.GetUID()
}
