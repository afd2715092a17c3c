package sshjob

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/accelstack/accelstack/api"
	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// racedEnv returns the engine's environment over a fake API server where
// someone creates the job's key Secret, as racer makes it, between the
// engine's read and its create, and the job.
func racedEnv(t *testing.T, racer func(job *batchv1beta1.MPIJob, scheme *runtime.Scheme) *corev1.Secret) (*jobs.Env, *jobs.Job) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	api.MustAddToScheme(scheme)
	mj := &batchv1beta1.MPIJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "mpi", UID: "job-uid"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				if err := c.Create(ctx, racer(mj, scheme)); err != nil {
					return err
				}
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	return &jobs.Env{Client: c, Cache: c, Scheme: scheme}, &jobs.Job{Object: mj}
}

// TestSecretRaceForeign: a key Secret someone else creates between the
// engine's read and its create is refused, and no ConfigMap points the job
// at it.
func TestSecretRaceForeign(t *testing.T) {
	env, job := racedEnv(t, func(mj *batchv1beta1.MPIJob, _ *runtime.Scheme) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: mj.Namespace, Name: SecretName(mj.Name)},
			Type:       corev1.SecretTypeSSHAuth,
			Data:       map[string][]byte{PrivateKeyKey: []byte("someone else's key")},
		}
	})
	err := Ensure(context.Background(), env, job, "mpijob", map[string]string{HostfileKey: "mpi-worker-0 slots=1\n"})
	if err == nil || !strings.Contains(err.Error(), "secret mpi-ssh belongs to another object") {
		t.Errorf("Ensure: %v, want the foreign Secret refused", err)
	}
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: ConfigMapName("mpi")}, cm); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap: %v, want none", err)
	}
}

// TestSecretRaceOwn: a key Secret the job owns, created meanwhile (by an
// earlier reconcile of the same job), is used.
func TestSecretRaceOwn(t *testing.T) {
	env, job := racedEnv(t, func(mj *batchv1beta1.MPIJob, scheme *runtime.Scheme) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: mj.Namespace, Name: SecretName(mj.Name)}}
		if err := jobs.SetOwner(mj, s, scheme); err != nil {
			t.Fatal(err)
		}
		return s
	})
	if err := Ensure(context.Background(), env, job, "mpijob", map[string]string{HostfileKey: "mpi-worker-0 slots=1\n"}); err != nil {
		t.Errorf("Ensure: %v", err)
	}
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: ConfigMapName("mpi")}, cm); err != nil {
		t.Errorf("ConfigMap: %v", err)
	}
}
