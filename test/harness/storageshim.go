package harness

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
)

// WaitStorageShim waits until the StorageShim's Ready condition has the
// wanted reason and returns the shim, failing the test when ctx ends first.
func WaitStorageShim(ctx context.Context, t testing.TB, c client.Client, ns, name, wantReason string) *tensorstackv1beta2.StorageShim {
	t.Helper()
	got := &tensorstackv1beta2.StorageShim{}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == tensorstackv1beta2.StorageShimReady && cond.Reason == wantReason {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("StorageShim %s/%s: Ready reason never became %q; status %+v: %v", ns, name, wantReason, got.Status, err)
	}
	return got
}
