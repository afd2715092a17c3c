package jobs

import (
	"context"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// maxReconcileAlloc bounds what one reconcile of an oversized job may
// allocate: far less than a state per replica of a million replicas.
const maxReconcileAlloc = 32 << 20

// TestOversizedJobNotPlanned: a job of more than MaxJobPods pods that its
// kind let through (plainKind validates nothing, as a job past a webhook
// that is down) fails with InvalidSpec and a Warning event naming the
// limit, gets no pod, and its reconcile allocates nothing per replica,
// whether it runs or is paused.
func TestOversizedJobNotPlanned(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replicas int32
		paused   bool
	}{
		{"just over the limit", MaxJobPods + 1, false},
		{"a million, paused", 1_000_000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newQuotaEnv(t, tc.replicas)
			// Room for an event per pod, should the job be run after all.
			e.recorder = events.NewFakeRecorder(2 * MaxJobPods)
			e.r.recorder = e.recorder
			if tc.paused {
				gj := e.job(t)
				gj.Spec.RunMode = &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{Enabled: true}}
				if err := e.c.Update(context.Background(), gj); err != nil {
					t.Fatal(err)
				}
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			e.reconcile(t)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxReconcileAlloc {
				t.Errorf("the reconcile allocated %d MiB, want at most %d", alloc>>20, maxReconcileAlloc>>20)
			}
			gj := e.job(t)
			c := Condition(&gj.Status, batchv1beta1.JobFailedCond)
			if gj.Status.Phase != batchv1beta1.JobFailed || c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonInvalid ||
				!strings.Contains(c.Message, "more than the 10000 a job may have") {
				t.Errorf("phase %s, Failed condition %+v; want Failed for %s naming the limit", gj.Status.Phase, c, ReasonInvalid)
			}
			if len(gj.Status.Tasks) != 0 {
				t.Errorf("tasks %d, want none", len(gj.Status.Tasks))
			}
			if n := e.pods(t); n != 0 {
				t.Errorf("%d pods created", n)
			}
			evs := e.events()
			if len(evs) != 1 || !strings.Contains(evs[0], "Warning "+EventFailed) || !strings.Contains(evs[0], "10000") {
				t.Errorf("events %q, want one Warning %s naming the limit", evs, EventFailed)
			}
			// Once failed, it stays so, still unplanned.
			e.reconcile(t)
			if n := e.pods(t); n != 0 {
				t.Errorf("%d pods created by a second reconcile", n)
			}
		})
	}
}

// TestValidateShapeTotal: the replica counts of all types together may not
// exceed MaxJobPods; the error names the field the kind counts in.
func TestValidateShapeTotal(t *testing.T) {
	at := Shape{Name: "j", Types: []string{"ps", "worker"}, MaxReplicas: []int32{2, MaxJobPods - 2}}
	if errs := ValidateShape(at); len(errs) != 0 {
		t.Errorf("%d pods: %v", MaxJobPods, errs)
	}
	over := Shape{Name: "j", Types: []string{"ps", "worker"}, MaxReplicas: []int32{6000, 5000}}
	errs := ValidateShape(over)
	if len(errs) != 1 || errs[0].Error() != "spec.replicaSpecs[*].replicas: Invalid value: 11000: the replicas of all types add up to 11000 pods, more than the 10000 a job may have" {
		t.Errorf("11000 pods: %v", errs)
	}
	// Counts past int32 do not wrap around to pass.
	huge := Shape{Name: "j", Types: []string{"a", "b"}, MaxReplicas: []int32{1 << 30, 1 << 30}}
	huge.CountPath = specPath.Child("worker", "replicas")
	if errs := ValidateShape(huge); len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "spec.worker.replicas: Invalid value: 2147483648") {
		t.Errorf("2^31 pods: %v", errs)
	}
}
