package notebook

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// testPod returns the pod p-0 in phase with the notebook container's state.
func testPod(phase corev1.PodPhase, ready bool, state corev1.ContainerState) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p-0", UID: "pod-uid"},
		Status: corev1.PodStatus{
			Phase:             phase,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: status}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "notebook", State: state}},
		},
	}
}

func TestObserve(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	terminating := testPod(corev1.PodRunning, true, running)
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	unschedulable := testPod(corev1.PodPending, false, corev1.ContainerState{})
	unschedulable.Status.ContainerStatuses = nil
	unschedulable.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"}}

	for _, tc := range []struct {
		name        string
		suspend     bool
		pod         *corev1.Pod
		wantPhase   tensorstackv1beta1.NotebookPhase
		wantReady   condition
		wantPodStat string
	}{
		{name: "no pod", wantPhase: "Pending", wantReady: condition{"False", ReasonWaiting, "Waiting for pod p-0"}},
		{name: "suspended", suspend: true, wantPhase: "Suspended", wantReady: condition{"False", ReasonSuspended, "The Notebook is suspended"}},
		{name: "suspended, pod terminating", suspend: true, pod: terminating, wantPhase: "Suspended", wantReady: condition{"False", ReasonSuspended, "The Notebook is suspended"}, wantPodStat: "Running"},
		{name: "ready", pod: testPod(corev1.PodRunning, true, running), wantPhase: "Running", wantReady: condition{"True", ReasonPodReady, "Pod p-0 is ready"}, wantPodStat: "Running"},
		{name: "not ready", pod: testPod(corev1.PodRunning, false, running), wantPhase: "Running", wantReady: condition{"False", ReasonWaiting, "Pod p-0 is not ready"}, wantPodStat: "Running"},
		{name: "unschedulable", pod: unschedulable, wantPhase: "Pending", wantReady: condition{"False", ReasonWaiting, "Pod p-0 is pending: Unschedulable: 0/3 nodes are available"}},
		{
			name:      "image pull",
			pod:       testPod(corev1.PodPending, false, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}}),
			wantPhase: "Failed", wantReady: condition{"False", ReasonPodFailed, "Container notebook of pod p-0: ImagePullBackOff: Back-off pulling image"},
			wantPodStat: "ImagePullBackOff",
		},
		{
			name:      "failed",
			pod:       testPod(corev1.PodFailed, false, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}),
			wantPhase: "Failed", wantReady: condition{"False", ReasonPodFailed, "Pod p-0 ended"}, wantPodStat: "Error",
		},
		{name: "unknown", pod: testPod(corev1.PodUnknown, false, running), wantPhase: "Unknown", wantReady: condition{"Unknown", ReasonPodUnknown, "Pod p-0 is in an unknown state"}, wantPodStat: "Running"},
		{name: "terminating", pod: terminating, wantPhase: "Pending", wantReady: condition{"False", ReasonWaiting, "Pod p-0 is terminating"}, wantPodStat: "Running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := observe(tc.suspend, tensorstackv1beta1.NotebookContainer, "p-0", tc.pod)
			if o.phase != tc.wantPhase {
				t.Errorf("phase %s, want %s", o.phase, tc.wantPhase)
			}
			if diff := cmp.Diff(tc.wantReady, o.ready, cmp.AllowUnexported(condition{})); diff != "" {
				t.Errorf("Ready (-want +got):\n%s", diff)
			}
			if tc.pod == nil {
				if o.pod != nil {
					t.Errorf("pod status %+v without a pod", o.pod)
				}
				return
			}
			want := &tensorstackv1beta1.PodStatus{Reference: tensorstackv1beta1.PodReference{Name: "p-0", UID: "pod-uid"}, Phase: tc.pod.Status.Phase, Status: tc.wantPodStat}
			if diff := cmp.Diff(want, o.pod); diff != "" {
				t.Errorf("pod status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSSHStatus(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "managed-notebook-x-ssh"},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Port: 22, NodePort: 31022, Protocol: corev1.ProtocolTCP}}},
	}
	seen := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	got := sshStatus(svc, &tensorstackv1beta1.NotebookSSHStatus{ServiceName: "managed-notebook-x-ssh", LastSSHClientActivity: &seen})
	want := &tensorstackv1beta1.NotebookSSHStatus{ServiceName: "managed-notebook-x-ssh", Port: 22, ClusterIP: "10.96.0.10", NodePort: 31022, Protocol: "TCP", LastSSHClientActivity: &seen}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SSH status (-want +got):\n%s", diff)
	}
}
