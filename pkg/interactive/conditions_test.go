package interactive

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// TestSetConditionKeepsIdle: setting one condition leaves the others (the
// Resource Keeper's Idle) as they are, and moves the transition time only
// with the status.
func TestSetConditionKeepsIdle(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(then.Add(time.Hour))
	later := metav1.NewTime(then.Add(2 * time.Hour))
	idle := tensorstackv1beta1.WorkloadCondition{Type: tensorstackv1beta1.ConditionIdle, Status: "True", Reason: "NoActivity", Message: "no request for 2h", LastTransitionTime: then, LastProbeTime: then}
	conds := []tensorstackv1beta1.WorkloadCondition{idle}
	SetCondition(&conds, tensorstackv1beta1.WorkloadCondition{Type: tensorstackv1beta1.ConditionReady, Status: "False", Reason: "Waiting"}, now)
	SetCondition(&conds, tensorstackv1beta1.WorkloadCondition{Type: "SSHReady", Status: "True", Reason: "KeysMounted"}, now)
	if len(conds) != 3 || !cmp.Equal(conds[0], idle) || conds[1].LastTransitionTime != now {
		t.Fatalf("conditions %+v", conds)
	}
	SetCondition(&conds, tensorstackv1beta1.WorkloadCondition{Type: tensorstackv1beta1.ConditionReady, Status: "False", Reason: "PodFailed"}, later)
	if conds[1].LastTransitionTime != now || conds[1].Reason != "PodFailed" {
		t.Errorf("same status: transition time %v reason %s, want %v", conds[1].LastTransitionTime, conds[1].Reason, now)
	}
	SetCondition(&conds, tensorstackv1beta1.WorkloadCondition{Type: tensorstackv1beta1.ConditionReady, Status: "True", Reason: "Ready"}, later)
	if conds[1].LastTransitionTime != later {
		t.Errorf("a new status kept the old transition time %v", conds[1].LastTransitionTime)
	}
	// The probe time is kept unless the new condition has one.
	SetCondition(&conds, tensorstackv1beta1.WorkloadCondition{Type: tensorstackv1beta1.ConditionIdle, Status: "True", Reason: "NoActivity"}, later)
	if c := FindCondition(conds, tensorstackv1beta1.ConditionIdle); c.LastProbeTime != then || c.LastTransitionTime != then {
		t.Errorf("Idle %+v, want the probe and transition times kept", c)
	}
	SetCondition(&conds, tensorstackv1beta1.WorkloadCondition{Type: tensorstackv1beta1.ConditionIdle, Status: "True", LastProbeTime: later}, later)
	if c := FindCondition(conds, tensorstackv1beta1.ConditionIdle); c.LastProbeTime != later {
		t.Errorf("Idle probed at %v, want %v", c.LastProbeTime, later)
	}
	RemoveCondition(&conds, "SSHReady")
	if len(conds) != 2 || FindCondition(conds, "SSHReady") != nil || FindCondition(conds, tensorstackv1beta1.ConditionReady) == nil {
		t.Errorf("after removing SSHReady: %+v", conds)
	}
}

// TestTensorBoardConditions: a TensorBoard's conditions go through
// WorkloadConditions and back unchanged.
func TestTensorBoardConditions(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tb := []tensorstackv1beta1.TensorBoardCondition{
		{Type: tensorstackv1beta1.ConditionIdle, Status: "True", Message: "idle", LastTransitionTime: then, LastProbeTime: then},
		{Type: tensorstackv1beta1.ConditionReady, Status: "False", Message: "Waiting: no pod"},
	}
	if diff := cmp.Diff(tb, ToTensorBoardConditions(FromTensorBoardConditions(tb))); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if FromTensorBoardConditions(nil) != nil || ToTensorBoardConditions(nil) != nil {
		t.Error("no conditions became some")
	}
}
