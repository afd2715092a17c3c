package tensorboard

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
)

// reconcile runs one reconcile of tb over a fake client that holds it and
// objs, and returns the TensorBoard after it, the client and the events.
func reconcile(t *testing.T, tb *tensorstackv1beta1.TensorBoard, objs ...client.Object) (*tensorstackv1beta1.TensorBoard, ctrl.Result, client.Client, *events.FakeRecorder) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), tensorstackv1beta1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(objs, tb)...).
		WithStatusSubresource(&tensorstackv1beta1.TensorBoard{}).Build()
	rec := events.NewFakeRecorder(10)
	r := NewReconciler(c, c, c, rec, Options{})
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tb)})
	if err != nil {
		t.Fatal(err)
	}
	got := &tensorstackv1beta1.TensorBoard{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(tb), got); err != nil {
		t.Fatal(err)
	}
	return got, res, c, rec
}

// TestReconcileInvalid: a TensorBoard the webhook did not see, with a
// location that is not one, runs nothing and says why, once.
func TestReconcileInvalid(t *testing.T) {
	tb := tensorBoard(tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"nfs://server/logs"}})
	tb.Status.Conditions = []tensorstackv1beta1.TensorBoardCondition{{Type: tensorstackv1beta1.ConditionIdle, Status: corev1.ConditionTrue, Message: "idle for 2h"}}
	got, _, c, rec := reconcile(t, tb)
	if got.Status.Phase != tensorstackv1beta1.TensorBoardFailed {
		t.Errorf("phase %s", got.Status.Phase)
	}
	if msg := readyMessage(got.Status.Conditions); !strings.HasPrefix(msg, ReasonInvalidSpec+": spec.trainingLogFilesets[0]") {
		t.Errorf("Ready message %q", msg)
	}
	if len(got.Status.Conditions) != 2 || got.Status.Conditions[0].Message != "idle for 2h" {
		t.Errorf("conditions %+v", got.Status.Conditions)
	}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "demo", Name: ObjectName(tb.Name)}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("Deployment: %v", err)
	}
	if ev := <-rec.Events; !strings.Contains(ev, ReasonInvalidSpec) {
		t.Errorf("event %q", ev)
	}
}

// TestReconcileSecretLayouts: the layout of the S3 Secret decides how the
// credentials reach TensorBoard; an unusable Secret waits.
func TestReconcileSecretLayouts(t *testing.T) {
	secret := func(data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "creds"}, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	for _, tc := range []struct {
		name       string
		secret     *corev1.Secret
		wantReason string
		wantEnv    bool
		wantVolume bool
	}{
		{"S3-env", secret(map[string]string{"endpoint": "http://m:9000", "accessKeyID": "a", "secretAccessKey": "b"}), "", true, false},
		{"S3-cfg", secret(map[string]string{".s3cfg": "[default]\naccess_key = a\n"}), "", false, true},
		{"both", secret(map[string]string{"endpoint": "http://m:9000", "accessKeyID": "a", "secretAccessKey": "b", ".s3cfg": "x"}), "", true, false},
		{"neither", secret(map[string]string{"token": "x"}), ReasonSecretInvalid, false, false},
		{"missing", nil, ReasonSecretNotFound, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := tensorBoard(tensorstackv1beta1.TensorBoardSpec{TrainingLogFilesets: []string{"t9k://minio/creds/bucket/run"}})
			var objs []client.Object
			if tc.secret != nil {
				objs = append(objs, tc.secret)
			}
			got, res, c, _ := reconcile(t, tb, objs...)
			dep := &appsv1.Deployment{}
			err := c.Get(context.Background(), client.ObjectKey{Namespace: "demo", Name: ObjectName(tb.Name)}, dep)
			if tc.wantReason != "" {
				if !apierrors.IsNotFound(err) || got.Status.Phase != tensorstackv1beta1.TensorBoardPending || res.RequeueAfter != SecretRetry ||
					!strings.HasPrefix(readyMessage(got.Status.Conditions), tc.wantReason) {
					t.Errorf("Deployment %v phase %s requeue %v Ready %q", err, got.Status.Phase, res.RequeueAfter, readyMessage(got.Status.Conditions))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ctr := dep.Spec.Template.Spec.Containers[0]
			hasEnv := false
			for _, e := range ctr.Env {
				hasEnv = hasEnv || e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
			}
			hasVolume := false
			for _, v := range dep.Spec.Template.Spec.Volumes {
				hasVolume = hasVolume || v.Secret != nil && v.Name != activity.AccessVolumeName
			}
			if hasEnv != tc.wantEnv || hasVolume != tc.wantVolume {
				t.Errorf("secretKeyRef env %v, Secret volume %v", hasEnv, hasVolume)
			}
		})
	}
}
