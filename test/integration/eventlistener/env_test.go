package eventlistener

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// env is the control plane the subtests share.
type env struct {
	cp          *harness.ControlPlane
	controllers *harness.Controllers
	c           client.Client
}

// startEnv starts the control plane and the controllers.
func startEnv(t *testing.T) *env {
	t.Helper()
	cp := harness.StartControlPlane(t)
	return &env{cp: cp, controllers: cp.StartControllers(t), c: cp.Client}
}

// namespace creates a namespace for one subtest.
func (e *env) namespace(t *testing.T) string {
	t.Helper()
	return testutil.Namespace(t, e.c, "events", nil)
}

// get reads the object ns/name into obj.
func (e *env) get(ctx context.Context, t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatal(err)
	}
}

// waitFor waits until the object ns/name exists and reads it into obj.
func (e *env) waitFor(ctx context.Context, t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	testutil.Poll(ctx, t, fmt.Sprintf("%T %s", obj, name), func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
		return err == nil, fmt.Sprint(err), nil
	})
}

// waitDeployment waits for the Deployment ns/name and returns it.
func (e *env) waitDeployment(ctx context.Context, t *testing.T, ns, name string) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	e.waitFor(ctx, t, ns, name, dep)
	return dep
}

// setAvailable writes the status the deployment controller would: all
// replicas available, or none.
func (e *env) setAvailable(ctx context.Context, t *testing.T, ns, name string, available bool) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dep := &appsv1.Deployment{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dep); err != nil {
			return err
		}
		n := *dep.Spec.Replicas
		cond := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
			Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."}
		dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: n, UpdatedReplicas: n}
		if available {
			dep.Status.ReadyReplicas, dep.Status.AvailableReplicas = n, n
		} else {
			cond.Status, cond.Reason, cond.Message = corev1.ConditionFalse, "MinimumReplicasUnavailable", "Deployment does not have minimum availability."
			dep.Status.UnavailableReplicas = n
		}
		dep.Status.Conditions = []appsv1.DeploymentCondition{cond}
		return e.c.Status().Update(ctx, dep)
	})
	if err != nil {
		t.Fatalf("writing the status of Deployment %s: %v", name, err)
	}
}

// readyOf returns the Ready condition of conds, or a zero one.
func readyOf(conds []triggersv1beta1.Condition) triggersv1beta1.Condition {
	for _, c := range conds {
		if c.Type == triggersv1beta1.ConditionReady {
			return c
		}
	}
	return triggersv1beta1.Condition{}
}

// waitListenerReady waits until the listener's Ready condition has status
// and returns the listener.
func (e *env) waitListenerReady(ctx context.Context, t *testing.T, ns, name string, status corev1.ConditionStatus) *triggersv1beta1.EventListener {
	t.Helper()
	el := &triggersv1beta1.EventListener{}
	testutil.Poll(ctx, t, fmt.Sprintf("EventListener %s Ready %s", name, status), func() (bool, string, error) {
		e.get(ctx, t, ns, name, el)
		r := readyOf(el.Status.Conditions)
		return r.Status == status, fmt.Sprintf("%+v", r), nil
	})
	return el
}

// waitTriggerReady waits until the trigger's Ready condition has status and
// reason, and returns it.
func (e *env) waitTriggerReady(ctx context.Context, t *testing.T, ns, name string, status corev1.ConditionStatus, reason string) triggersv1beta1.Condition {
	t.Helper()
	wt := &triggersv1beta1.WorkflowTrigger{}
	var r triggersv1beta1.Condition
	testutil.Poll(ctx, t, fmt.Sprintf("WorkflowTrigger %s Ready %s %s", name, status, reason), func() (bool, string, error) {
		e.get(ctx, t, ns, name, wt)
		r = readyOf(wt.Status.Conditions)
		return r.Status == status && r.Reason == reason, fmt.Sprintf("%+v", r), nil
	})
	return r
}

// envValue is the value of the variable name of the Deployment's container.
func envValue(dep *appsv1.Deployment, name string) (string, bool) {
	for _, v := range dep.Spec.Template.Spec.Containers[0].Env {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

// readyFlag returns a readiness flag that is set.
func readyFlag() *atomic.Bool {
	var b atomic.Bool
	b.Store(true)
	return &b
}
