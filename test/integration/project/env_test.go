package project

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// env is the control plane the subtests share.
type env struct {
	controllers *harness.Controllers
	c           client.Client
}

// startEnv starts the control plane, the Project webhook configuration of
// deploy/controllers pointed at the in-process controllers, and the
// controllers.
func startEnv(t *testing.T) *env {
	t.Helper()
	cp := harness.StartControlPlane(t)
	cp.InstallWebhook(t, "controllers/projects-webhook.yaml", nil)
	return &env{controllers: cp.StartControllers(t), c: cp.Client}
}

var counter atomic.Int32

// name returns a fresh name for one subtest's Project or QuotaProfile.
func name(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, counter.Add(1))
}

// project reads the Project name.
func (e *env) project(ctx context.Context, t *testing.T, name string) *tensorstackv1beta1.Project {
	t.Helper()
	p := &tensorstackv1beta1.Project{}
	if err := e.c.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// ready returns the Ready condition of p, or a zero one.
func ready(p *tensorstackv1beta1.Project) tensorstackv1beta1.ProjectCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == tensorstackv1beta1.ProjectReady {
			return c
		}
	}
	return tensorstackv1beta1.ProjectCondition{}
}

// waitReady waits until the Ready condition of the Project name has status
// and reason, and returns the Project.
func (e *env) waitReady(ctx context.Context, t *testing.T, name string, status corev1.ConditionStatus, reason string) *tensorstackv1beta1.Project {
	t.Helper()
	var p *tensorstackv1beta1.Project
	testutil.Poll(ctx, t, fmt.Sprintf("Project %s Ready=%s (%s)", name, status, reason), func() (bool, string, error) {
		p = e.project(ctx, t, name)
		c := ready(p)
		return c.Status == status && c.Reason == reason, fmt.Sprintf("%+v", p.Status), nil
	})
	return p
}

// waitFor waits until the object ns/name exists and reads it into obj.
func (e *env) waitFor(ctx context.Context, t *testing.T, ns, name string, obj client.Object, cond func() bool) {
	t.Helper()
	testutil.Poll(ctx, t, fmt.Sprintf("%T %s/%s", obj, ns, name), func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
		if err != nil {
			return false, err.Error(), nil //nolint:nilerr // not there yet: poll again
		}
		return cond == nil || cond(), fmt.Sprintf("%+v", obj), nil
	})
}

// waitGone waits until the object ns/name no longer exists.
func (e *env) waitGone(ctx context.Context, t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	testutil.Poll(ctx, t, fmt.Sprintf("%T %s/%s gone", obj, ns, name), func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, fmt.Sprint(err), nil
	})
}

// updateProject changes the Project name with edit, retrying on conflicts.
func (e *env) updateProject(ctx context.Context, t *testing.T, name string, edit func(*tensorstackv1beta1.Project)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &tensorstackv1beta1.Project{}
		if err := e.c.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
			return err
		}
		edit(p)
		return e.c.Update(ctx, p)
	})
	if err != nil {
		t.Fatalf("updating Project %s: %v", name, err)
	}
}

// refused checks that err refuses the request naming each of fields.
func refused(t *testing.T, what string, err error, fields ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: admitted, want refused naming %v", what, fields)
		return
	}
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
		t.Errorf("%s: %v, want an Invalid error", what, err)
	}
	for _, f := range fields {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("%s: %v, want it to name %s", what, err, f)
		}
	}
}

// newProject returns a Project name with no spec.
func newProject(name string) *tensorstackv1beta1.Project {
	return &tensorstackv1beta1.Project{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// keyOf is the key of the cluster-scoped object name.
func keyOf(name string) client.ObjectKey { return client.ObjectKey{Name: name} }

// keyOf2 is the key of the object ns/name.
func keyOf2(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }
