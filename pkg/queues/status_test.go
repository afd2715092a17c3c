package queues

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

func condOf(st schedv1beta1.PodGroupStatus, typ string) schedv1beta1.PodGroupCondition {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return schedv1beta1.PodGroupCondition{}
}

func TestGroupStatus(t *testing.T) {
	spec := schedv1beta1.PodGroupSpec{MinMember: 3, Roles: []schedv1beta1.Role{{Name: "master", MinMember: 1}, {Name: "worker", MinMember: 2}}}
	tests := []struct {
		name           string
		pods           []*corev1.Pod
		was            metav1.ConditionStatus // GroupScheduled before
		wantSufficient metav1.ConditionStatus
		wantShort      string
		wantScheduled  metav1.ConditionStatus
		wantAllocated  corev1.ResourceList
		wantCounts     schedv1beta1.PodCounts
	}{
		{
			name:           "no pods",
			wantSufficient: metav1.ConditionFalse, wantShort: "0 of minMember 3 pods",
			wantScheduled: metav1.ConditionFalse,
		},
		{
			name: "enough pods in all but not per role, none bound",
			pods: []*corev1.Pod{
				testPod("a", "1", inGroup("g", "master")), testPod("b", "1", inGroup("g", "master")), testPod("c", "1", inGroup("g", "worker")),
			},
			wantSufficient: metav1.ConditionFalse, wantShort: `1 of minMember 2 pods of role "worker"`,
			wantScheduled: metav1.ConditionFalse,
			wantCounts:    schedv1beta1.PodCounts{Pending: 3},
		},
		{
			name: "whole gang bound and running",
			pods: []*corev1.Pod{
				testPod("a", "1", inGroup("g", "master"), bound("n1"), phase(corev1.PodRunning)),
				testPod("b", "2", inGroup("g", "worker"), bound("n1"), phase(corev1.PodRunning)),
				testPod("c", "2", inGroup("g", "worker"), bound("n2")),
			},
			wantSufficient: metav1.ConditionTrue, wantScheduled: metav1.ConditionTrue,
			wantAllocated: rl("cpu", "5"),
			wantCounts:    schedv1beta1.PodCounts{Running: 2, Pending: 1},
		},
		{
			name: "finished and deleting pods are not members; finished ones hold nothing",
			pods: []*corev1.Pod{
				testPod("a", "1", inGroup("g", "master"), bound("n1"), phase(corev1.PodSucceeded)),
				testPod("b", "2", inGroup("g", "worker"), bound("n1"), phase(corev1.PodFailed)),
				testPod("c", "2", inGroup("g", "worker"), bound("n2"), phase(corev1.PodRunning), deleting()),
				testPod("d", "4", inGroup("g", "worker"), phase(corev1.PodUnknown)),
			},
			wantSufficient: metav1.ConditionFalse, wantShort: "1 of minMember 3 pods",
			wantScheduled: metav1.ConditionFalse,
			wantCounts:    schedv1beta1.PodCounts{Succeeded: 1, Failed: 1, Running: 1, Unknown: 1},
		},
		{
			name: "scheduled stays true while a pod is bound",
			pods: []*corev1.Pod{
				testPod("a", "1", inGroup("g", "master"), bound("n1"), phase(corev1.PodRunning)),
				testPod("b", "2", inGroup("g", "worker")),
			},
			was:            metav1.ConditionTrue,
			wantSufficient: metav1.ConditionFalse, wantShort: "2 of minMember 3 pods",
			wantScheduled: metav1.ConditionTrue,
			wantAllocated: rl("cpu", "1"),
			wantCounts:    schedv1beta1.PodCounts{Running: 1, Pending: 1},
		},
		{
			name: "scheduled returns to false once no pod is bound",
			pods: []*corev1.Pod{
				testPod("a", "1", inGroup("g", "master")), testPod("b", "1", inGroup("g", "worker")), testPod("c", "1", inGroup("g", "worker")),
			},
			was:            metav1.ConditionTrue,
			wantSufficient: metav1.ConditionTrue, wantScheduled: metav1.ConditionFalse,
			wantCounts: schedv1beta1.PodCounts{Pending: 3},
		},
	}
	earlier := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pg := &schedv1beta1.PodGroup{Spec: spec}
			if tt.was != "" {
				pg.Status.Conditions = []schedv1beta1.PodGroupCondition{{Type: schedv1beta1.PodGroupScheduled, Status: tt.was, LastTransitionTime: earlier}}
			}
			st := groupStatus(pg, tt.pods, now)
			suff := condOf(st, schedv1beta1.PodGroupSufficientMember)
			if suff.Status != tt.wantSufficient {
				t.Errorf("SufficientGroupMember = %+v, want %s", suff, tt.wantSufficient)
			}
			if tt.wantSufficient == metav1.ConditionTrue && suff.Reason != schedv1beta1.ReasonSufficientMemberPods {
				t.Errorf("SufficientGroupMember reason %q", suff.Reason)
			}
			if tt.wantSufficient == metav1.ConditionFalse && (suff.Reason != schedv1beta1.ReasonInsufficientMemberPods || !strings.Contains(suff.Message, tt.wantShort)) {
				t.Errorf("SufficientGroupMember %+v, want reason InsufficientMemberPods and %q", suff, tt.wantShort)
			}
			sched := condOf(st, schedv1beta1.PodGroupScheduled)
			if sched.Status != tt.wantScheduled {
				t.Errorf("GroupScheduled = %+v, want %s", sched, tt.wantScheduled)
			}
			if sched.Status == metav1.ConditionTrue && (sched.Reason != "PodGroupScheduled" || sched.Message != "Resources have been allocated to PodGroup") {
				t.Errorf("GroupScheduled = %+v", sched)
			}
			if sched.Status == metav1.ConditionFalse && sched.Reason != schedv1beta1.ReasonPodGroupPending {
				t.Errorf("GroupScheduled = %+v", sched)
			}
			wantTime := now
			if tt.was == tt.wantScheduled {
				wantTime = earlier
			}
			if !sched.LastTransitionTime.Equal(&wantTime) {
				t.Errorf("GroupScheduled transition time %v, want %v", sched.LastTransitionTime, wantTime)
			}
			assertResources(t, st.Allocated, tt.wantAllocated)
			if st.PodCounts != tt.wantCounts {
				t.Errorf("counts %+v, want %+v", st.PodCounts, tt.wantCounts)
			}
		})
	}
}

func TestGroupStatusMinMemberZero(t *testing.T) {
	st := groupStatus(&schedv1beta1.PodGroup{}, nil, metav1.Now())
	if c := condOf(st, schedv1beta1.PodGroupScheduled); c.Status != metav1.ConditionFalse {
		t.Errorf("a group without pods is scheduled: %+v", c)
	}
	if c := condOf(st, schedv1beta1.PodGroupSufficientMember); c.Status != metav1.ConditionTrue {
		t.Errorf("minMember 0 is not sufficient: %+v", c)
	}
}

func TestGroupStatusStable(t *testing.T) {
	pg := &schedv1beta1.PodGroup{Spec: schedv1beta1.PodGroupSpec{MinMember: 1}}
	pods := []*corev1.Pod{testPod("a", "1", inGroup("g", ""), bound("n"), phase(corev1.PodRunning))}
	pg.Status = groupStatus(pg, pods, metav1.NewTime(time.Unix(1000, 0)))
	again := groupStatus(pg, pods, metav1.NewTime(time.Unix(2000, 0)))
	for i := range again.Conditions {
		if !again.Conditions[i].LastTransitionTime.Equal(&pg.Status.Conditions[i].LastTransitionTime) {
			t.Errorf("condition %s restamped without a change", again.Conditions[i].Type)
		}
	}
}

func TestQueueStatus(t *testing.T) {
	pods := []*corev1.Pod{
		testPod("a", "4", bound("n"), phase(corev1.PodRunning)),
		testPod("b", "2", bound("n")),
		testPod("c", "8"),
		testPod("d", "16", bound("n"), phase(corev1.PodSucceeded)),
	}
	now := metav1.Now()
	q := &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{NamespaceSelector: &metav1.LabelSelector{}}}
	st := queueStatus(q, pods, 3, now)
	assertResources(t, st.Allocated, rl("cpu", "6"))
	if st.PodGroups.Total != 3 || st.Pods != (schedv1beta1.PodCounts{Running: 1, Pending: 2, Succeeded: 1}) {
		t.Errorf("counts %+v %+v", st.PodGroups, st.Pods)
	}
	if !meta.IsStatusConditionTrue(st.Conditions, QueueOpen) || !meta.IsStatusConditionTrue(st.Conditions, QueueReady) {
		t.Errorf("conditions %+v", st.Conditions)
	}

	for _, tc := range []struct {
		name       string
		spec       schedv1beta1.QueueSpec
		open       bool
		readyWhy   string
		msgContain string
	}{
		{"closed", schedv1beta1.QueueSpec{Closed: true, NamespaceSelector: &metav1.LabelSelector{}}, false, ReasonClosed, "closed"},
		{"no namespaceSelector", schedv1beta1.QueueSpec{}, true, ReasonNoNamespaces, "namespaceSelector"},
		{"bad selector", schedv1beta1.QueueSpec{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}}, true, ReasonInvalidSpec, "namespaceSelector"},
		{"bad node selector", schedv1beta1.QueueSpec{NamespaceSelector: &metav1.LabelSelector{}, NodeSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "In"}}}}, true, ReasonInvalidSpec, "nodeSelector"},
		{"maxDuration too long", schedv1beta1.QueueSpec{NamespaceSelector: &metav1.LabelSelector{}, MaxDuration: ptr.To("293y")}, true, ReasonInvalidSpec, "maxDuration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := queueStatus(&schedv1beta1.Queue{Spec: tc.spec}, nil, 0, now)
			if got := meta.IsStatusConditionTrue(st.Conditions, QueueOpen); got != tc.open {
				t.Errorf("Open = %t, want %t", got, tc.open)
			}
			r := meta.FindStatusCondition(st.Conditions, QueueReady)
			if r == nil || r.Status != metav1.ConditionFalse || r.Reason != tc.readyWhy || !strings.Contains(r.Message, tc.msgContain) {
				t.Errorf("Ready = %+v, want False %s", r, tc.readyWhy)
			}
		})
	}
}

func TestExpired(t *testing.T) {
	now := time.Now()
	at := func(age time.Duration, opts ...podOpt) *corev1.Pod {
		p := testPod("p"+age.String(), "1", opts...)
		p.CreationTimestamp = metav1.NewTime(now.Add(-age))
		return p
	}
	pods := []*corev1.Pod{
		at(3*time.Hour, phase(corev1.PodRunning)),
		at(2 * time.Hour),
		at(5*time.Hour, phase(corev1.PodSucceeded)),
		at(4*time.Hour, deleting()),
		at(90 * time.Minute),
		at(time.Hour),
	}
	victims, next := expired(pods, 2*time.Hour, now)
	if len(victims) != 2 || victims[0] != pods[0] || victims[1] != pods[1] {
		t.Errorf("victims %v", victims)
	}
	if next != 30*time.Minute {
		t.Errorf("next = %v, want 30m", next)
	}
	if v, next := expired(pods[2:4], time.Hour, now); len(v) != 0 || next != 0 {
		t.Errorf("finished and deleting pods: victims %v next %v", v, next)
	}
}
