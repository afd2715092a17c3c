package ascendjob

import (
	"testing"

	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
)

// TestViewRunPolicy: runPolicy reaches the engine as ascendjob.md says:
// backoffLimit, else the label fault-retry-times, else no limit;
// cleanPodPolicy All, Running (the pods not finished) or None (the
// default); activeDeadlineSeconds as it is.
func TestViewRunPolicy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		label    string // fault-retry-times, "" for none
		policy   mindxdlv1.RunPolicy
		backoff  *int32
		cleanUp  batchv1beta1.CleanUpPolicy
		deadline *int64
	}{
		{name: "defaults", cleanUp: batchv1beta1.CleanUpPolicyNone},
		{name: "fault-retry-times", label: "3", backoff: ptr.To[int32](3), cleanUp: batchv1beta1.CleanUpPolicyNone},
		{name: "backoffLimit over the label", label: "3", policy: mindxdlv1.RunPolicy{BackoffLimit: ptr.To[int32](1)},
			backoff: ptr.To[int32](1), cleanUp: batchv1beta1.CleanUpPolicyNone},
		{name: "fault-retry-times not a count", label: "x", cleanUp: batchv1beta1.CleanUpPolicyNone},
		{name: "cleanPodPolicy All", policy: mindxdlv1.RunPolicy{CleanPodPolicy: ptr.To(mindxdlv1.CleanPodPolicyAll)},
			cleanUp: batchv1beta1.CleanUpPolicyAll},
		{name: "cleanPodPolicy Running", policy: mindxdlv1.RunPolicy{CleanPodPolicy: ptr.To(mindxdlv1.CleanPodPolicyRunning)},
			cleanUp: batchv1beta1.CleanUpPolicyUnfinished},
		{name: "cleanPodPolicy None", policy: mindxdlv1.RunPolicy{CleanPodPolicy: ptr.To(mindxdlv1.CleanPodPolicyNone)},
			cleanUp: batchv1beta1.CleanUpPolicyNone},
		{name: "activeDeadlineSeconds", policy: mindxdlv1.RunPolicy{ActiveDeadlineSeconds: ptr.To[int64](600)},
			cleanUp: batchv1beta1.CleanUpPolicyNone, deadline: ptr.To[int64](600)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			aj := job("pytorch", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{"Master": replica(1, "", 0), "Worker": replica(1, "", 0)})
			if tc.label != "" {
				aj.Labels[mindxdlv1.FaultRetryTimesLabel] = tc.label
			}
			aj.Spec.RunPolicy = tc.policy
			v := Kind{}.View(aj)
			if !ptr.Equal(v.BackoffLimit, tc.backoff) {
				t.Errorf("backoffLimit %v, want %v", ptr.Deref(v.BackoffLimit, -1), ptr.Deref(tc.backoff, -1))
			}
			if v.CleanUpPolicy != tc.cleanUp {
				t.Errorf("clean-up policy %q, want %q", v.CleanUpPolicy, tc.cleanUp)
			}
			if !ptr.Equal(v.ActiveDeadlineSeconds, tc.deadline) {
				t.Errorf("activeDeadlineSeconds %v, want %v", ptr.Deref(v.ActiveDeadlineSeconds, -1), ptr.Deref(tc.deadline, -1))
			}
		})
	}
}

// TestSPBlockAnnotation: the annotation sp-block reaches
// HCCL_LOGIC_SUPERPOD_ID: rank / (sp-block / chips of the pod), and 0
// without it.
func TestSPBlockAnnotation(t *testing.T) {
	aj := job("pytorch", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{"Worker": replica(4, "huawei.com/Ascend910", 8)})
	c := &aj.Spec.ReplicaSpecs["Worker"].Template.Spec.Containers[0]
	if got := envMap(commonEnv(aj, c, false, "Worker", 3))["HCCL_LOGIC_SUPERPOD_ID"]; got != "0" {
		t.Errorf("without sp-block: HCCL_LOGIC_SUPERPOD_ID %q, want 0", got)
	}
	aj.Annotations = map[string]string{mindxdlv1.SPBlockAnnotation: "16"}
	if got := envMap(commonEnv(aj, c, false, "Worker", 3))["HCCL_LOGIC_SUPERPOD_ID"]; got != "1" {
		t.Errorf("sp-block 16, 8 chips, rank 3: HCCL_LOGIC_SUPERPOD_ID %q, want 1", got)
	}
}
