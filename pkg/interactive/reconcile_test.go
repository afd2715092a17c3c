package interactive

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// TestReconcile: the prologue skips what is gone or going, writes the
// status sync changed, and retries a stale cache or a conflict shortly.
func TestReconcile(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), tensorstackv1beta1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	live := &tensorstackv1beta1.TensorBoard{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "live"}}
	going := &tensorstackv1beta1.TensorBoard{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "going",
		DeletionTimestamp: &metav1.Time{Time: time.Unix(1, 0)}, Finalizers: []string{"test"}}}
	var conflict bool
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(live, going).
		WithStatusSubresource(&tensorstackv1beta1.TensorBoard{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if conflict {
				return apierrors.NewConflict(schema.GroupResource{Resource: "tensorboards"}, obj.GetName(), errors.New("changed"))
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		}}).Build()
	status := func(tb *tensorstackv1beta1.TensorBoard) any { return &tb.Status }
	run := func(name string, sync func(context.Context, *tensorstackv1beta1.TensorBoard) (ctrl.Result, error)) (ctrl.Result, error) {
		return Reconcile(context.Background(), c, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: name}}, &tensorstackv1beta1.TensorBoard{}, status, sync)
	}
	phase := func(p tensorstackv1beta1.TensorBoardPhase, err error) func(context.Context, *tensorstackv1beta1.TensorBoard) (ctrl.Result, error) {
		return func(_ context.Context, tb *tensorstackv1beta1.TensorBoard) (ctrl.Result, error) {
			tb.Status.Phase = p
			return ctrl.Result{RequeueAfter: time.Minute}, err
		}
	}
	read := func() tensorstackv1beta1.TensorBoardPhase {
		got := &tensorstackv1beta1.TensorBoard{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(live), got); err != nil {
			t.Fatal(err)
		}
		return got.Status.Phase
	}

	for _, name := range []string{"gone", "going"} {
		if res, err := run(name, func(context.Context, *tensorstackv1beta1.TensorBoard) (ctrl.Result, error) {
			t.Errorf("%s: sync ran", name)
			return ctrl.Result{}, nil
		}); err != nil || !res.IsZero() {
			t.Errorf("%s: %v %+v", name, err, res)
		}
	}
	if res, err := run("live", phase(tensorstackv1beta1.TensorBoardRunning, nil)); err != nil || res.RequeueAfter != time.Minute || read() != tensorstackv1beta1.TensorBoardRunning {
		t.Errorf("sync: %v %+v phase %s", err, res, read())
	}
	if res, err := run("live", phase(tensorstackv1beta1.TensorBoardFailed, ErrStale)); err != nil || res.RequeueAfter != StaleRetry || read() != tensorstackv1beta1.TensorBoardRunning {
		t.Errorf("stale: %v %+v phase %s", err, res, read())
	}
	conflict = true
	if res, err := run("live", phase(tensorstackv1beta1.TensorBoardFailed, nil)); err != nil || res.RequeueAfter != StaleRetry {
		t.Errorf("conflict: %v %+v", err, res)
	}
	failed := errors.New("failed")
	if _, err := run("live", phase(tensorstackv1beta1.TensorBoardFailed, failed)); !errors.Is(err, failed) || !apierrors.IsConflict(err) {
		t.Errorf("failed and conflict: %v", err)
	}
}

// TestEnsureFailed: each error of Writer.Ensure has its outcome.
func TestEnsureFailed(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "owner"}}
	rec := events.NewFakeRecorder(4)
	if o, retry, err := EnsureFailed(rec, owner, nil); o != nil || retry != 0 || err != nil {
		t.Errorf("nil: %v %v %v", o, retry, err)
	}
	if o, retry, err := EnsureFailed(rec, owner, ErrStale); o != nil || retry != StaleRetry || err != nil {
		t.Errorf("stale: %v %v %v", o, retry, err)
	}
	if o, _, err := EnsureFailed(rec, owner, errors.New("the Service x "+ErrNotOwned.Error())); o != nil || err == nil {
		t.Errorf("a message alone is no ErrNotOwned: %v %v", o, err)
	}
	<-rec.Events
	if o, _, err := EnsureFailed(rec, owner, ErrNotOwned); o == nil || o.Phase != PhaseFailed || o.Reason != ReasonNameConflict || err != nil {
		t.Errorf("not owned: %+v %v", o, err)
	}
	if len(rec.Events) != 0 {
		t.Errorf("events %d, want none", len(rec.Events))
	}
}
