package jobs

import (
	"strings"
	"testing"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

func TestValidateShape(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape Shape
		want  []string
	}{
		{"fine", Shape{Name: "j", Types: []string{"master", "worker"}, MaxReplicas: []int32{1, 8}}, nil},
		{"none", Shape{Name: "j"}, []string{"spec.replicaSpecs: Required value"}},
		{"duplicate", Shape{Name: "j", Types: []string{"worker", "worker"}, MaxReplicas: []int32{1, 1}}, []string{`spec.replicaSpecs[1].type: Duplicate value: "worker"`}},
		{"not a label", Shape{Name: "j", Types: []string{"Worker"}, MaxReplicas: []int32{1}}, []string{"spec.replicaSpecs[0].type: Invalid value"}},
		{"too long", Shape{Name: strings.Repeat("a", 55), Types: []string{"worker"}, MaxReplicas: []int32{10}}, []string{"at most 63 characters"}},
		{"leading digit", Shape{Name: "1job", Types: []string{"worker"}, MaxReplicas: []int32{1}}, []string{"starting with a letter"}},
		{"run modes", Shape{Name: "j", Types: []string{"worker"}, MaxReplicas: []int32{1}, RunMode: &batchv1beta1.RunMode{
			Debug: &batchv1beta1.DebugMode{ReplicaSpecs: []batchv1beta1.ReplicaDebugSet{{Type: "ps"}}},
			Pause: &batchv1beta1.PauseMode{ResumeSpecs: []batchv1beta1.ResumeSpec{{Type: "chief"}}},
		}}, []string{`spec.runMode.debug.replicaSpecs[0].type: Not found: "ps"`, `spec.runMode.pause.resumeSpecs[0].type: Not found: "chief"`}},
		{"queue", Shape{Name: "j", Types: []string{"worker"}, MaxReplicas: []int32{1}, Scheduler: &batchv1beta1.SchedulePolicy{
			T9kScheduler: &batchv1beta1.T9kScheduler{Priority: 101}}}, []string{"spec.scheduler.t9kScheduler.queue: Required value", "spec.scheduler.t9kScheduler.priority: Invalid value: 101"}},
	} {
		errs := ValidateShape(tc.shape)
		if len(errs) != len(tc.want) {
			t.Errorf("%s: %v, want %d errors", tc.name, errs, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(errs[i].Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.name, errs[i], w)
			}
		}
	}
}

func TestValidateShapeUpdate(t *testing.T) {
	rm := func(args ...string) *batchv1beta1.RunMode {
		return &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{ResumeSpecs: []batchv1beta1.ResumeSpec{{Type: "w", Args: args}}}}
	}
	if errs := ValidateShapeUpdate(Shape{RunMode: rm("a")}, Shape{RunMode: rm("a")}); len(errs) != 0 {
		t.Errorf("unchanged: %v", errs)
	}
	if errs := ValidateShapeUpdate(Shape{}, Shape{RunMode: &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{Enabled: true}}}); len(errs) != 0 {
		t.Errorf("pausing: %v", errs)
	}
	for _, cur := range []*batchv1beta1.RunMode{rm("b"), nil} {
		if errs := ValidateShapeUpdate(Shape{RunMode: rm("a")}, Shape{RunMode: cur}); len(errs) != 1 || !strings.Contains(errs[0].Error(), "spec.runMode.pause.resumeSpecs: Forbidden") {
			t.Errorf("changed to %+v: %v", cur, errs)
		}
	}
}
