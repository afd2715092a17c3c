package interactive

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// pod is a pod named name created at minute min, in phase, Ready or not.
func pod(name string, min int, phase corev1.PodPhase, ready bool) corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(time.Unix(0, 0).Add(time.Duration(min) * time.Minute))},
		Status:     corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func TestObserve(t *testing.T) {
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}}
	stuckDep := dep.DeepCopy()
	stuckDep.Status.Conditions = []appsv1.DeploymentCondition{{
		Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: ReasonProgressDeadlineExceeded, Message: "quota",
	}}
	crash := pod("c", 1, corev1.PodRunning, false)
	crash.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "tensorboard", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
	pullInit := pod("i", 1, corev1.PodPending, false)
	pullInit.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "download-logs", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}
	deleting := pod("old", 5, corev1.PodRunning, true)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(600, 0)}

	for _, tc := range []struct {
		name       string
		dep        *appsv1.Deployment
		pods       []corev1.Pod
		suspend    bool
		wantPhase  Phase
		wantReason string
		wantPod    string
	}{
		{"no Deployment", nil, nil, false, PhasePending, ReasonWaiting, ""},
		{"no pod", dep, nil, false, PhasePending, ReasonWaiting, ""},
		{"stuck rollout", stuckDep, nil, false, PhaseFailed, ReasonProgressDeadlineExceeded, ""},
		{"pod not ready", dep, []corev1.Pod{pod("p", 1, corev1.PodRunning, false)}, false, PhasePending, ReasonWaiting, "p"},
		{"pod ready", dep, []corev1.Pod{pod("p", 1, corev1.PodRunning, true)}, false, PhaseRunning, ReasonReady, "p"},
		{"crash loop", dep, []corev1.Pod{crash}, false, PhaseFailed, "CrashLoopBackOff", "c"},
		{"init image", dep, []corev1.Pod{pullInit}, false, PhaseFailed, "ImagePullBackOff", "i"},
		{"pod failed", dep, []corev1.Pod{pod("p", 1, corev1.PodFailed, false)}, false, PhaseFailed, ReasonPodFailed, "p"},
		{"node lost", dep, []corev1.Pod{pod("p", 1, corev1.PodUnknown, false)}, false, PhaseUnknown, "Unknown", "p"},
		{"suspended, pod going", dep, []corev1.Pod{deleting}, true, PhaseSuspended, ReasonSuspended, "old"},
		{"suspended", dep, nil, true, PhaseSuspended, ReasonSuspended, ""},
		{"newest pod not being deleted", dep, []corev1.Pod{pod("a", 1, corev1.PodRunning, false), deleting, pod("b", 2, corev1.PodRunning, true)}, false, PhaseRunning, ReasonReady, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Observe(tc.dep, tc.pods, tc.suspend)
			if s.Phase != tc.wantPhase || s.Reason != tc.wantReason {
				t.Errorf("phase %s reason %s (%s), want %s %s", s.Phase, s.Reason, s.Message, tc.wantPhase, tc.wantReason)
			}
			if s.Ready() != (tc.wantPhase == PhaseRunning) {
				t.Errorf("Ready %v", s.Ready())
			}
			got := ""
			if s.Pod != nil {
				got = s.Pod.Reference.Name
				if s.Pod.Reference.UID != types.UID("uid-"+got) {
					t.Errorf("pod UID %s", s.Pod.Reference.UID)
				}
			}
			if got != tc.wantPod {
				t.Errorf("pod %q, want %q", got, tc.wantPod)
			}
		})
	}
}
