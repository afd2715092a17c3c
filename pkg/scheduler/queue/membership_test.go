package queue

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

func TestMembershipOf(t *testing.T) {
	groups := map[string]*schedv1beta1.PodGroup{
		"ns1/train": {ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "train"}, Spec: schedv1beta1.PodGroupSpec{Queue: "gpu-a100"}},
		"ns1/plain": {ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "plain"}},
	}
	lookup := func(namespace, name string) *schedv1beta1.PodGroup { return groups[namespace+"/"+name] }

	tests := []struct {
		name   string
		ns     string
		labels map[string]string
		lookup GroupLookup
		want   Membership
	}{
		{
			name:   "group label with existing group uses the group's queue over the queue label",
			ns:     "ns1",
			labels: map[string]string{schedv1beta1.GroupNameLabel: "train", schedv1beta1.QueueLabel: "other", schedv1beta1.RoleLabel: "worker"},
			lookup: lookup,
			want:   Membership{Queue: "gpu-a100", Group: "train", Role: "worker"},
		},
		{
			name:   "existing group with empty spec.queue is in the default queue",
			ns:     "ns1",
			labels: map[string]string{schedv1beta1.GroupNameLabel: "plain", schedv1beta1.QueueLabel: "other"},
			lookup: lookup,
			want:   Membership{Queue: "default", Group: "plain"},
		},
		{
			name:   "group of the same name in another namespace does not count",
			ns:     "ns2",
			labels: map[string]string{schedv1beta1.GroupNameLabel: "train", schedv1beta1.QueueLabel: "fallback"},
			lookup: lookup,
			want:   Membership{Queue: "fallback", Group: "train"},
		},
		{
			name:   "missing group falls back to the queue label",
			ns:     "ns1",
			labels: map[string]string{schedv1beta1.GroupNameLabel: "nope", schedv1beta1.QueueLabel: "fallback"},
			lookup: lookup,
			want:   Membership{Queue: "fallback", Group: "nope"},
		},
		{
			name:   "missing group and no queue label: no queue",
			ns:     "ns1",
			labels: map[string]string{schedv1beta1.GroupNameLabel: "nope"},
			lookup: lookup,
			want:   Membership{Group: "nope"},
		},
		{
			name:   "nil lookup uses the queue label",
			ns:     "ns1",
			labels: map[string]string{schedv1beta1.GroupNameLabel: "train", schedv1beta1.QueueLabel: "fallback"},
			want:   Membership{Queue: "fallback", Group: "train"},
		},
		{
			name:   "queue label only",
			ns:     "ns1",
			labels: map[string]string{schedv1beta1.QueueLabel: "q1"},
			lookup: lookup,
			want:   Membership{Queue: "q1"},
		},
		{
			name:   "no labels",
			ns:     "ns1",
			lookup: lookup,
			want:   Membership{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: tt.ns, Name: "p", Labels: tt.labels}}
			if got := MembershipOf(pod, tt.lookup); got != tt.want {
				t.Errorf("MembershipOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestGroupQueue(t *testing.T) {
	if got := GroupQueue(&schedv1beta1.PodGroup{}); got != "default" {
		t.Errorf("GroupQueue(no queue) = %q, want \"default\"", got)
	}
	if got := GroupQueue(&schedv1beta1.PodGroup{Spec: schedv1beta1.PodGroupSpec{Queue: "q"}}); got != "q" {
		t.Errorf("GroupQueue = %q, want \"q\"", got)
	}
}

func TestHoldsFinished(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name         string
		node         string
		phase        corev1.PodPhase
		deleting     bool
		wantHolds    bool
		wantFinished bool
	}{
		{name: "pending, not bound", phase: corev1.PodPending},
		{name: "bound, pending", node: "n1", phase: corev1.PodPending, wantHolds: true},
		{name: "bound, running", node: "n1", phase: corev1.PodRunning, wantHolds: true},
		{name: "bound, unknown phase", node: "n1", phase: corev1.PodUnknown, wantHolds: true},
		{name: "bound, no phase yet", node: "n1", wantHolds: true},
		{name: "succeeded", node: "n1", phase: corev1.PodSucceeded, wantFinished: true},
		{name: "failed", node: "n1", phase: corev1.PodFailed, wantFinished: true},
		{name: "failed, never bound", phase: corev1.PodFailed, wantFinished: true},
		{name: "running but being deleted", node: "n1", phase: corev1.PodRunning, deleting: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{NodeName: tt.node}, Status: corev1.PodStatus{Phase: tt.phase}}
			if tt.deleting {
				pod.DeletionTimestamp = &now
			}
			if got := Holds(pod); got != tt.wantHolds {
				t.Errorf("Holds = %v, want %v", got, tt.wantHolds)
			}
			if got := Finished(pod); got != tt.wantFinished {
				t.Errorf("Finished = %v, want %v", got, tt.wantFinished)
			}
		})
	}
}
