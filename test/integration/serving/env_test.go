package serving

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// env is a control plane and the controllers the subtests share.
type env struct {
	controllers *harness.Controllers
	c           client.Client
}

// startEnv starts the control plane and the controllers; install, when not
// nil, runs before the controllers start (to install more CRDs).
func startEnv(t *testing.T, install func(*harness.ControlPlane)) *env {
	t.Helper()
	cp := harness.StartControlPlane(t)
	if install != nil {
		install(cp)
	}
	return &env{controllers: cp.StartControllers(t), c: cp.Client}
}

// namespace creates a namespace for one subtest.
func (e *env) namespace(t *testing.T) string {
	t.Helper()
	return testutil.Namespace(t, e.c, "srv", nil)
}

// waitObject waits until the object ns/name exists and cond, when not nil,
// holds for it.
func waitObject[T client.Object](ctx context.Context, t *testing.T, e *env, ns, name string, obj T, cond func(T) bool) T {
	t.Helper()
	testutil.Poll(ctx, t, fmt.Sprintf("%T %s", obj, name), func() (bool, string, error) {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			return false, err.Error(), nil //nolint:nilerr // not there yet: poll again
		}
		return cond == nil || cond(obj), fmt.Sprintf("%+v", obj), nil
	})
	return obj
}

// setDeploymentAvailable writes the status of the Deployment ns/name as
// the Deployment controller would once ready of its pods are available.
func (e *env) setDeploymentAvailable(ctx context.Context, t *testing.T, ns, name string, ready int32) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dep := &appsv1.Deployment{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dep); err != nil {
			return err
		}
		status, reason := corev1.ConditionFalse, "MinimumReplicasUnavailable"
		if ready >= ptr.Deref(dep.Spec.Replicas, 1) && ready > 0 {
			status, reason = corev1.ConditionTrue, "MinimumReplicasAvailable"
		}
		dep.Status = appsv1.DeploymentStatus{
			ObservedGeneration: dep.Generation, Replicas: ptr.Deref(dep.Spec.Replicas, 1), ReadyReplicas: ready, AvailableReplicas: ready,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: status, Reason: reason, Message: "Deployment has minimum availability.", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		}
		return e.c.Status().Update(ctx, dep)
	})
	if err != nil {
		t.Fatalf("writing the status of Deployment %s: %v", name, err)
	}
}

// createPod creates a pod of dep as its ReplicaSet would, owned by dep
// (standing in for that ReplicaSet).
func (e *env) createPod(ctx context.Context, t *testing.T, dep *appsv1.Deployment, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: dep.Namespace, Name: name, Labels: dep.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(dep, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: dep.Spec.Template.Spec,
	}
	testutil.MustCreate(ctx, t, e.c, pod)
	return pod
}

// checkLog fails t for every reconcile error of controller in the log.
func (e *env) checkLog(t *testing.T, controller string) {
	t.Helper()
	for _, line := range strings.Split(e.controllers.Log(), "\n") {
		if strings.Contains(line, "Reconciler error") && strings.Contains(line, `"`+controller+`"`) {
			t.Errorf("the controller failed: %s", line)
		}
	}
}
