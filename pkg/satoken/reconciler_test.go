package satoken

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// TestConflictLooksAgain: a token whose name a foreign ServiceAccount
// holds is reported and looked at again, for the controller does not
// watch that ServiceAccount.
func TestConflictLooksAgain(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, tensorstackv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	sat := &tensorstackv1beta1.ServiceAccountToken{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "taken", UID: "u"},
		Spec:       tensorstackv1beta1.ServiceAccountTokenSpec{Duration: "1h"},
	}
	foreign := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "taken"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(sat, foreign).
		WithStatusSubresource(&tensorstackv1beta1.ServiceAccountToken{}).Build()
	r := NewReconciler(c, c, events.NewFakeRecorder(10), nil, Cluster{})

	res, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sat)})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != conflictRecheck {
		t.Errorf("RequeueAfter %v, want %v", res.RequeueAfter, conflictRecheck)
	}
	got := &tensorstackv1beta1.ServiceAccountToken{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(sat), got); err != nil {
		t.Fatal(err)
	}
	if c := readyCondition(got); c == nil || c.Reason != ReasonServiceAccountConflict {
		t.Errorf("Ready %+v, want %s", c, ReasonServiceAccountConflict)
	}
}
