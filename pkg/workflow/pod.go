package workflow

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
	"github.com/accelstack/accelstack/pkg/workflow/seqpod"
)

// runPod runs a Pod or SeqPod template: it creates the run's pod once and
// follows it to its end.
func (r *Reconciler) runPod(ctx context.Context, run *batchv1beta1.WorkflowRun, spec *batchv1beta1.WorkflowTemplateSpec,
	typ batchv1beta1.WorkflowTemplateType, b *binding) (outcome, error) {
	name := run.Status.PodName
	if name == "" {
		name = childName(run.Name+"-pod", suffix(string(run.UID), strconv.Itoa(attempt(run))))
	}
	pod := &corev1.Pod{}
	err := r.cache.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, pod)
	switch {
	case apierrors.IsNotFound(err) && run.Status.PodName != "":
		// The cache may lag behind a pod just created; ask the API server.
		if err := r.api.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, pod); apierrors.IsNotFound(err) {
			return outcome{phase: batchv1beta1.NodeFailed, message: fmt.Sprintf("pod %s was deleted", name)}, nil
		} else if err != nil {
			return outcome{}, fmt.Errorf("getting pod %s: %w", name, err)
		}
	case apierrors.IsNotFound(err):
		pod, err = r.buildPod(run, spec, typ, b, name)
		if err != nil {
			return errorOutcome("%v", err), nil
		}
		if err := r.client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) {
				return errorOutcome("creating pod %s: %v", name, err), nil
			}
			return outcome{}, fmt.Errorf("creating pod %s: %w", name, err)
		}
		run.Status.PodName = name
		return running("pod " + name + " created"), nil
	case err != nil:
		return outcome{}, fmt.Errorf("getting pod %s: %w", name, err)
	}
	run.Status.PodName = name
	if !metav1.IsControlledBy(pod, run) {
		return errorOutcome("pod %s exists and is not this run's", name), nil
	}
	if typ == batchv1beta1.WorkflowTemplateTypeSeqPod {
		return r.seqPodOutcome(ctx, pod, spec)
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return outcome{phase: batchv1beta1.NodeSucceeded, message: "pod " + name + " succeeded"}, nil
	case corev1.PodFailed:
		return outcome{phase: batchv1beta1.NodeFailed, message: podFailure(pod)}, nil
	}
	return running(podRunning(pod)), nil
}

// seqPodOutcome reads the outcome of a SeqPod run's pod and its results. A
// pod whose step failed while later steps still wait (a step killed before
// it could record its failure) is deleted by deleteHungPod once the run's
// failure is recorded: deleted first, the pod would take the failed
// step's message with it if the status write failed.
func (r *Reconciler) seqPodOutcome(_ context.Context, pod *corev1.Pod, spec *batchv1beta1.WorkflowTemplateSpec) (outcome, error) {
	done, succeeded, msg := seqpod.Outcome(pod)
	if !done {
		return running(podRunning(pod)), nil
	}
	if !succeeded {
		if _, err := seqpod.Results(pod, spec.Results); err != nil {
			msg += "; " + err.Error()
		}
		return outcome{phase: batchv1beta1.NodeFailed, message: "pod " + pod.Name + ": " + msg}, nil
	}
	o := outcome{phase: batchv1beta1.NodeSucceeded, message: "pod " + pod.Name + " succeeded"}
	if len(spec.Results) > 0 {
		results, err := seqpod.Results(pod, spec.Results)
		if err != nil {
			// Results over their limit fail the run, with the reason.
			return outcome{phase: batchv1beta1.NodeFailed, message: err.Error()}, nil //nolint:nilerr // the error is the run's outcome
		}
		o.results = results
	}
	return o, nil
}

// podRunning says where a pod that has not ended is.
func podRunning(pod *corev1.Pod) string {
	if pod.Status.Phase == "" {
		return "pod " + pod.Name + " created"
	}
	return "pod " + pod.Name + " is " + string(pod.Status.Phase)
}

// podFailure says why a pod failed: its reason, or its first container
// that ended with an error.
func podFailure(pod *corev1.Pod) string {
	msg := "pod " + pod.Name + " failed"
	if pod.Status.Reason != "" {
		msg += ": " + pod.Status.Reason
		if pod.Status.Message != "" {
			msg += ": " + pod.Status.Message
		}
		return msg
	}
	for _, cs := range append(append([]corev1.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return fmt.Sprintf("%s: container %s exited with code %d (%s)", msg, cs.Name, t.ExitCode, t.Reason)
		}
	}
	return msg
}

// buildPod returns the pod of a Pod or SeqPod run: the template's pod spec
// with the variables substituted, the workspaces mounted, restartPolicy
// Never, the run's service account and scheduler.
func (r *Reconciler) buildPod(run *batchv1beta1.WorkflowRun, spec *batchv1beta1.WorkflowTemplateSpec,
	typ batchv1beta1.WorkflowTemplateType, b *binding, name string) (*corev1.Pod, error) {
	var ps corev1.PodSpec
	if typ == batchv1beta1.WorkflowTemplateTypePod {
		ps = *spec.Pod.PodSpec.DeepCopy()
		if err := b.vars.ReplaceAll(&ps, "spec.pod"); err != nil {
			return nil, err
		}
	} else {
		t := spec.SeqPod.DeepCopy()
		if err := b.vars.ReplaceAll(t, "spec.seqPod"); err != nil {
			return nil, err
		}
		var err error
		if ps, err = seqpod.BuildPodSpec(t, r.opts.ToolsImage, spec.Results); err != nil {
			return nil, err
		}
	}
	ps.RestartPolicy = corev1.RestartPolicyNever
	if run.Spec.ServiceAccountName != "" {
		ps.ServiceAccountName = run.Spec.ServiceAccountName
	}
	mountWorkspaces(&ps, b.workspaces)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: run.Namespace,
			Name:      name,
			Labels:    map[string]string{batchv1beta1.WorkflowRunLabel: labelValue(run.Name)},
		},
		Spec: ps,
	}
	if s := run.Spec.Scheduler; s != nil && s.T9kScheduler != nil {
		pod.Spec.SchedulerName = schedulerv1beta1.SchedulerName
		pod.Labels[schedulerv1beta1.QueueLabel] = s.T9kScheduler.Queue
	}
	pod.Annotations = queue.CarryGrant(pod.Annotations, run, run.Spec.Scheduler.QueueName())
	if err := controllerutil.SetControllerReference(run, pod, r.scheme); err != nil {
		return nil, err
	}
	return pod, nil
}

// mountWorkspaces adds a volume per bound workspace to ps and mounts it in
// every container.
func mountWorkspaces(ps *corev1.PodSpec, ws []boundWorkspace) {
	for i, w := range ws {
		vol := corev1.Volume{Name: fmt.Sprintf("workspace-%d", i)}
		bnd := w.binding
		switch {
		case bnd.PersistentVolumeClaim != nil:
			vol.PersistentVolumeClaim = bnd.PersistentVolumeClaim.DeepCopy()
		case bnd.EmptyDir != nil:
			vol.EmptyDir = bnd.EmptyDir.DeepCopy()
		case bnd.ConfigMap != nil:
			vol.ConfigMap = bnd.ConfigMap.DeepCopy()
		case bnd.Secret != nil:
			vol.Secret = bnd.Secret.DeepCopy()
		default:
			vol.EmptyDir = &corev1.EmptyDirVolumeSource{}
		}
		ps.Volumes = append(ps.Volumes, vol)
		m := corev1.VolumeMount{Name: vol.Name, MountPath: mountPath(w.decl), SubPath: bnd.SubPath, ReadOnly: w.decl.ReadOnly}
		for j := range ps.InitContainers {
			ps.InitContainers[j].VolumeMounts = append(ps.InitContainers[j].VolumeMounts, m)
		}
		for j := range ps.Containers {
			ps.Containers[j].VolumeMounts = append(ps.Containers[j].VolumeMounts, m)
		}
	}
}

// deleteHungPod deletes the pod of a failed SeqPod run whose step failed
// while later steps still wait, so that it does not hang; it runs after
// the run's status, which names the failed step, was written.
func (r *Reconciler) deleteHungPod(ctx context.Context, run *batchv1beta1.WorkflowRun) error {
	st := &run.Status
	if st.Phase != batchv1beta1.NodeFailed || st.PodName == "" || st.WorkflowTemplateSpec == nil {
		return nil
	}
	if typ, err := TemplateType(st.WorkflowTemplateSpec, nil); err != nil || typ != batchv1beta1.WorkflowTemplateTypeSeqPod {
		return nil //nolint:nilerr // an invalid template ran no pod
	}
	pod := &corev1.Pod{}
	if err := r.cache.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: st.PodName}, pod); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(pod, run) || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded || !pod.DeletionTimestamp.IsZero() {
		return nil
	}
	if done, succeeded, _ := seqpod.Outcome(pod); !done || succeeded {
		return nil
	}
	if err := r.client.Delete(ctx, pod, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting pod %s, whose step failed: %w", pod.Name, err)
	}
	return nil
}
