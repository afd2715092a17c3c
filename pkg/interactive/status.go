package interactive

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// Phase is the coarse state of a workload; its values are those of
// TensorBoardPhase and ResourcePhase.
type Phase string

// The phases.
const (
	PhasePending   Phase = "Pending"
	PhaseRunning   Phase = "Running"
	PhaseSuspended Phase = "Suspended"
	PhaseFailed    Phase = "Failed"
	PhaseUnknown   Phase = "Unknown"
)

// Reasons of a workload's state, for the Ready conditions.
const (
	// ReasonReady: the pod is running and ready.
	ReasonReady = "Ready"
	// ReasonSuspended: spec.suspend is true.
	ReasonSuspended = "Suspended"
	// ReasonWaiting: no pod yet, or a pod not ready yet.
	ReasonWaiting = "Waiting"
	// ReasonPodFailed: the pod failed.
	ReasonPodFailed = "PodFailed"
	// ReasonProgressDeadlineExceeded: the Deployment made no progress.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonInvalidSpec: the spec cannot run (the webhook was bypassed);
	// nothing runs.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonNameConflict: an object of the workload's names belongs to
	// something else (ErrNotOwned).
	ReasonNameConflict = "NameConflict"
)

// failedWaiting are the reasons of a waiting container that will not
// start without a change: the workload is Failed while they last.
var failedWaiting = []string{
	"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName",
	"CreateContainerConfigError", "CreateContainerError", "RunContainerError",
}

// State is the state of a workload, read from its Deployment and pods.
type State struct {
	Phase Phase
	// Pod is the workload's pod; nil when it has none.
	Pod *tensorstackv1beta1.PodStatus
	// Reason and Message explain the phase.
	Reason, Message string
}

// Ready reports whether the workload serves.
func (s State) Ready() bool { return s.Phase == PhaseRunning }

// Observe returns the state of a workload from its Deployment (nil when
// there is none yet) and the pods it selects: Suspended while suspend
// holds, Running once its pod is ready, Failed when the pod failed or a
// container cannot start, Unknown when the pod's node is lost, Pending
// otherwise.
func Observe(dep *appsv1.Deployment, pods []corev1.Pod, suspend bool) State {
	pod := currentPod(pods)
	var s State
	if pod != nil {
		s.Pod = &tensorstackv1beta1.PodStatus{
			Reference: tensorstackv1beta1.PodReference{Name: pod.Name, UID: pod.UID},
			Phase:     pod.Status.Phase,
		}
	}
	switch {
	case suspend:
		s.Phase, s.Reason, s.Message = PhaseSuspended, ReasonSuspended, "The workload is suspended"
	case pod == nil && dep != nil && progressDeadlineExceeded(dep) != "":
		s.Phase, s.Reason, s.Message = PhaseFailed, ReasonProgressDeadlineExceeded, fmt.Sprintf("Deployment %s: %s", dep.Name, progressDeadlineExceeded(dep))
	case pod == nil && dep == nil:
		s.Phase, s.Reason, s.Message = PhasePending, ReasonWaiting, "Waiting for the Deployment"
	case pod == nil:
		s.Phase, s.Reason, s.Message = PhasePending, ReasonWaiting, fmt.Sprintf("Waiting for a pod of Deployment %s", dep.Name)
	case pod.Status.Phase == corev1.PodFailed:
		s.Phase, s.Reason, s.Message = PhaseFailed, ReasonPodFailed, fmt.Sprintf("Pod %s failed: %s %s", pod.Name, pod.Status.Reason, pod.Status.Message)
	case pod.Status.Phase == corev1.PodUnknown:
		s.Phase, s.Reason, s.Message = PhaseUnknown, string(corev1.PodUnknown), fmt.Sprintf("The state of pod %s is unknown", pod.Name)
	default:
		if ctr, w := StuckContainer(pod); w != nil {
			s.Phase, s.Reason, s.Message = PhaseFailed, w.Reason, fmt.Sprintf("Container %s of pod %s: %s: %s", ctr, pod.Name, w.Reason, w.Message)
		} else if pod.Status.Phase == corev1.PodRunning && PodReady(pod) {
			s.Phase, s.Reason, s.Message = PhaseRunning, ReasonReady, fmt.Sprintf("Pod %s is ready", pod.Name)
		} else {
			s.Phase, s.Reason, s.Message = PhasePending, ReasonWaiting, fmt.Sprintf("Waiting for pod %s to be ready", pod.Name)
		}
	}
	return s
}

// currentPod returns the newest pod not being deleted, else the newest
// pod, else nil.
func currentPod(pods []corev1.Pod) *corev1.Pod {
	var best *corev1.Pod
	for i := range pods {
		p := &pods[i]
		switch {
		case best == nil,
			best.DeletionTimestamp != nil && p.DeletionTimestamp == nil,
			(best.DeletionTimestamp == nil) == (p.DeletionTimestamp == nil) && best.CreationTimestamp.Before(&p.CreationTimestamp):
			best = p
		}
	}
	return best
}

// progressDeadlineExceeded returns the message of dep's Progressing
// condition when its rollout is stuck, else "".
func progressDeadlineExceeded(dep *appsv1.Deployment) string {
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == ReasonProgressDeadlineExceeded {
			return c.Message
		}
	}
	return ""
}

// PodReady reports whether the pod's Ready condition is True.
func PodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// StuckContainer returns a container of pod (init containers first)
// waiting for a reason that needs a change, such as a pullable image, and
// its waiting state; nil when there is none.
func StuckContainer(pod *corev1.Pod) (string, *corev1.ContainerStateWaiting) {
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range statuses {
			if w := cs.State.Waiting; w != nil && slices.Contains(failedWaiting, w.Reason) {
				return cs.Name, w
			}
		}
	}
	return "", nil
}

// Pods returns the pods of namespace that selector matches, from reader.
func Pods(ctx context.Context, reader client.Reader, namespace string, selector map[string]string) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := reader.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels(selector)); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	return list.Items, nil
}

// Deployment returns the Deployment namespace/name from reader, or nil
// when there is none.
func Deployment(ctx context.Context, reader client.Reader, namespace, name string) (*appsv1.Deployment, error) {
	dep := &appsv1.Deployment{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, dep); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("getting Deployment %s: %w", name, err)
	}
	return dep, nil
}

// ObserveDeployment returns the state of a workload (Observe) from its
// Deployment name of namespace and the pods selector selects, read from
// reader; dep, when not nil, is the Deployment just written and is not
// read again. It is PhaseUnknown when they cannot be read.
func ObserveDeployment(ctx context.Context, reader client.Reader, namespace, name string, selector map[string]string, dep *appsv1.Deployment, suspend bool) (State, error) {
	var err error
	if dep == nil {
		if dep, err = Deployment(ctx, reader, namespace, name); err != nil {
			return State{Phase: PhaseUnknown}, err
		}
	}
	pods, err := Pods(ctx, reader, namespace, selector)
	if err != nil {
		return State{Phase: PhaseUnknown}, err
	}
	return Observe(dep, pods, suspend), nil
}
