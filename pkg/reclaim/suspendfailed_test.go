package reclaim

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// TestKeeperSuspendFailed: when setting spec.suspend fails, the workload
// stays Idle (NoActivity, not Suspended), a Warning event SuspendFailed
// says why, and the next probe tries again.
func TestKeeperSuspendFailed(t *testing.T) {
	patches := 0
	f := newFixture(t, map[string]string{IdleAfterAnnotationKey: "10m", SuspendAfterAnnotationKey: "20m"}, &interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*tensorstackv1beta1.Notebook); ok && obj.GetName() == "nb" {
				patches++
				return errors.New("the API server is away")
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	nb, _ := f.notebook(testNS, "nb", tensorstackv1beta1.NotebookJupyter, 0)
	f.clock.Step(11 * time.Minute)
	f.probe()
	f.wantIdle(nb, corev1.ConditionTrue, ReasonNoActivity)
	f.clock.Step(20 * time.Minute)
	f.probe()
	f.wantIdle(nb, corev1.ConditionTrue, ReasonNoActivity, "Idle for 20m")
	f.get(nb)
	if nb.Spec.Suspend {
		t.Fatal("suspended although the patch failed")
	}
	f.wantEvents("nb", "Normal Idle:", "Warning SuspendFailed: Idle for 20m but could not be suspended: the API server is away")
	f.clock.Step(time.Minute)
	f.probe()
	if patches != 2 {
		t.Errorf("%d suspend attempts, want 2: one per probe past suspend-after", patches)
	}
}
