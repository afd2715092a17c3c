package satoken

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/satoken"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// env is a control plane with the member ClusterRole of deploy/controllers
// and the controller on a fake clock.
type env struct {
	cp    *harness.ControlPlane
	c     client.Client
	clock *clocktesting.FakeClock
	log   *harness.LogCapture
}

func startEnv(t *testing.T) *env {
	t.Helper()
	ctrl.SetLogger(logr.Discard())
	// kube-controller-manager counts the ResourceQuota of testSubresourceFailed.
	cp := harness.StartControlPlane(t, harness.WithControllerManager())
	e := &env{cp: cp, c: cp.Client, clock: clocktesting.NewFakeClock(time.Now()), log: &harness.LogCapture{}}
	e.applyRoles(t)
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{
		Scheme: cp.Scheme, Logger: e.log.Logger(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptrTo(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Two years: longer than one token (a year at most), so that a
	// duration of 0 is served by renewals.
	if err := satoken.Setup(mgr, satoken.Options{Clock: e.clock, MaxDuration: 2 * satoken.DefaultMaxDuration}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return e
}

// applyRoles creates the ClusterRoles of deploy/controllers/project-roles.yaml.
func (e *env) applyRoles(t *testing.T) {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy", "controllers", "project-roles.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		role := &rbacv1.ClusterRole{}
		if err := yaml.UnmarshalStrict([]byte(doc), role); err != nil {
			t.Fatalf("project-roles.yaml: %v", err)
		}
		if err := e.c.Create(context.Background(), role); err != nil {
			t.Fatal(err)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

func sat(ns, name, duration string) *tensorstackv1beta1.ServiceAccountToken {
	return &tensorstackv1beta1.ServiceAccountToken{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       tensorstackv1beta1.ServiceAccountTokenSpec{Duration: duration},
	}
}

// wait polls the ServiceAccountToken ns/name until cond holds.
func (e *env) wait(ctx context.Context, t *testing.T, ns, name, what string, cond func(*tensorstackv1beta1.ServiceAccountToken) bool) *tensorstackv1beta1.ServiceAccountToken {
	t.Helper()
	var s *tensorstackv1beta1.ServiceAccountToken
	testutil.Eventually(ctx, t, 30*time.Second, what, func() (bool, string, error) {
		s = &tensorstackv1beta1.ServiceAccountToken{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			return false, "", err
		}
		return cond(s), fmt.Sprintf("%+v", s.Status), nil
	})
	return s
}

// hasReady says whether s's Ready condition has status and reason.
func hasReady(s *tensorstackv1beta1.ServiceAccountToken, status corev1.ConditionStatus, reason string) bool {
	for _, c := range s.Status.Conditions {
		if c.Type == tensorstackv1beta1.ServiceAccountTokenReady {
			return c.Status == status && c.Reason == reason
		}
	}
	return false
}

// poke changes an annotation of the ServiceAccountToken so that the
// controller looks at it again after the fake clock moved.
func (e *env) poke(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s := &tensorstackv1beta1.ServiceAccountToken{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			return err
		}
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations["test/poke"] = e.clock.Now().String()
		return e.c.Update(ctx, s)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// reconciles counts the reconciles of ServiceAccountToken ns/name that the
// log shows started, and those that ended.
func (e *env) reconciles(ns, name string) (started, ended int) {
	return testutil.Reconciles(e.log.String(), "ServiceAccountToken", ns, name)
}

// pokeReconciled pokes ns/name and waits until a reconcile that started
// after the poke has ended: reconciles of one object do not overlap, so
// the one after those already started did.
func (e *env) pokeReconciled(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	started, _ := e.reconciles(ns, name)
	e.poke(ctx, t, ns, name)
	testutil.Eventually(ctx, t, 30*time.Second, "a reconcile after the poke", func() (bool, string, error) {
		_, ended := e.reconciles(ns, name)
		return ended > started, fmt.Sprintf("%d started before, %d ended", started, ended), nil
	})
}

// TestServiceAccountToken runs the tests against one control plane.
func TestServiceAccountToken(t *testing.T) {
	e := startEnv(t)
	// The subtests move the one fake clock: they run one after another.
	t.Run("Issue", e.testIssue)
	t.Run("Expire", e.testExpire)
	t.Run("Renew", e.testRenew)
	t.Run("SubresourceNotFound", e.testSubresourceNotFound)
	t.Run("ServiceAccountConflict", e.testConflict)
	t.Run("SubresourceFailed", e.testSubresourceFailed)
	t.Run("Refused", e.testRefused)
	t.Run("TooLong", e.testTooLong)
}

// testIssue: the seed's example gets a Secret <name>-<5hex> with a token
// and a kubeconfig; the kubeconfig lists pods in the namespace and is
// refused in another; the token is in no log, event or status.
func (e *env) testIssue(t *testing.T) {
	ctx := testutil.Context(t)
	ns := testutil.Namespace(t, e.c, "sat", nil)
	other := testutil.Namespace(t, e.c, "other", nil)
	if err := e.c.Create(ctx, sat(ns, "sat-sample", "1h")); err != nil {
		t.Fatal(err)
	}
	s := e.wait(ctx, t, ns, "sat-sample", "Ready", func(s *tensorstackv1beta1.ServiceAccountToken) bool {
		return hasReady(s, corev1.ConditionTrue, tensorstackv1beta1.ReasonSubresourcesReady)
	})
	if s.Status.SecretRef == nil || !strings.HasPrefix(s.Status.SecretRef.Name, "sat-sample-") || len(s.Status.SecretRef.Name) != len("sat-sample-")+5 {
		t.Fatalf("status.secretRef = %+v, want sat-sample-<5hex>", s.Status.SecretRef)
	}
	if s.Status.ExpirationTime == nil {
		t.Fatal("no status.expirationTime")
	}
	if d := s.Status.ExpirationTime.Sub(e.clock.Now()); d < 55*time.Minute || d > 65*time.Minute {
		t.Errorf("token expires in %v, want about 1h", d)
	}
	secret := &corev1.Secret{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: s.Status.SecretRef.Name}, secret); err != nil {
		t.Fatal(err)
	}
	token := string(secret.Data[satoken.TokenKey])
	if strings.Count(token, ".") != 2 {
		t.Fatalf("token is no JWT (%d bytes)", len(token))
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data[satoken.KubeconfigKey])
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	raw, err := clientcmd.Load(secret.Data[satoken.KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	if got := raw.Contexts[raw.CurrentContext].Namespace; got != ns {
		t.Errorf("kubeconfig namespace = %q, want %q", got, ns)
	}
	user, err := client.New(cfg, client.Options{Scheme: e.cp.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	// RBAC caches may lag the RoleBinding for a moment.
	testutil.Eventually(ctx, t, 20*time.Second, "the kubeconfig lists pods in its namespace", func() (bool, string, error) {
		err := user.List(ctx, &corev1.PodList{}, client.InNamespace(ns))
		return err == nil, fmt.Sprint(err), nil
	})
	if err := user.List(ctx, &corev1.PodList{}, client.InNamespace(other)); !apierrors.IsForbidden(err) {
		t.Errorf("listing pods in another namespace: %v, want Forbidden", err)
	}
	if err := user.List(ctx, &corev1.NamespaceList{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing namespaces: %v, want Forbidden", err)
	}

	// The token appears in no log line, no event and no status.
	if strings.Contains(e.log.String(), token) {
		t.Error("the token is in the controller's log")
	}
	var events corev1.EventList
	if err := e.c.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range events.Items {
		if strings.Contains(ev.Message, token) {
			t.Errorf("event %s carries the token", ev.Name)
		}
	}
	b, _ := yaml.Marshal(s.Status)
	if strings.Contains(string(b), token) {
		t.Error("the status carries the token")
	}
}

// testExpire: once the fake clock passes the expiration time, Ready turns
// False with TokenExpired.
func (e *env) testExpire(t *testing.T) {
	ctx := testutil.Context(t)
	ns := testutil.Namespace(t, e.c, "sat", nil)
	if err := e.c.Create(ctx, sat(ns, "short", "10m")); err != nil {
		t.Fatal(err)
	}
	s := e.wait(ctx, t, ns, "short", "Ready", func(s *tensorstackv1beta1.ServiceAccountToken) bool {
		return hasReady(s, corev1.ConditionTrue, tensorstackv1beta1.ReasonSubresourcesReady)
	})
	e.clock.SetTime(s.Status.ExpirationTime.Add(time.Second))
	e.poke(ctx, t, ns, "short")
	s = e.wait(ctx, t, ns, "short", "TokenExpired", func(s *tensorstackv1beta1.ServiceAccountToken) bool {
		return hasReady(s, corev1.ConditionFalse, tensorstackv1beta1.ReasonTokenExpired)
	})
	for _, c := range s.Status.Conditions {
		if c.Message != "This token has expired" {
			t.Errorf("message %q", c.Message)
		}
	}
}

// testRenew: a duration of 0, the maximum (two years here), is longer than
// one token, and is renewed once 4/5 of a token's life has passed, with a
// new token in the same Secret.
func (e *env) testRenew(t *testing.T) {
	ctx := testutil.Context(t)
	ns := testutil.Namespace(t, e.c, "sat", nil)
	if err := e.c.Create(ctx, sat(ns, "endless", "0")); err != nil {
		t.Fatal(err)
	}
	s := e.wait(ctx, t, ns, "endless", "Ready", func(s *tensorstackv1beta1.ServiceAccountToken) bool {
		return hasReady(s, corev1.ConditionTrue, tensorstackv1beta1.ReasonSubresourcesReady)
	})
	first := s.Status.ExpirationTime.Time
	key := client.ObjectKey{Namespace: ns, Name: s.Status.SecretRef.Name}
	secret := &corev1.Secret{}
	if err := e.c.Get(ctx, key, secret); err != nil {
		t.Fatal(err)
	}
	oldToken := string(secret.Data[satoken.TokenKey])
	now := e.clock.Now()
	renewed := now.Add(first.Sub(now) * 9 / 10)
	e.clock.SetTime(renewed)
	e.poke(ctx, t, ns, "endless")
	testutil.Eventually(ctx, t, 30*time.Second, "a renewed token", func() (bool, string, error) {
		if err := e.c.Get(ctx, key, secret); err != nil {
			return false, "", err
		}
		at := secret.Annotations[satoken.IssuedAtAnnotationKey]
		return at == renewed.UTC().Format(time.RFC3339), at, nil
	})
	if string(secret.Data[satoken.TokenKey]) == oldToken {
		t.Error("the Secret holds the old token")
	}
	s = e.wait(ctx, t, ns, "endless", "Ready", func(s *tensorstackv1beta1.ServiceAccountToken) bool {
		return hasReady(s, corev1.ConditionTrue, tensorstackv1beta1.ReasonSubresourcesReady)
	})
	if s.Status.ExpirationTime.Before(&metav1.Time{Time: first}) {
		t.Errorf("renewed token expires at %v, before the first one (%v)", s.Status.ExpirationTime, first)
	}
}

// testSubresourceNotFound: deleting the ServiceAccount before the token
// expires turns Ready False with SubresourceNotFound, for good.
func (e *env) testSubresourceNotFound(t *testing.T) {
	ctx := testutil.Context(t)
	ns := testutil.Namespace(t, e.c, "sat", nil)
	if err := e.c.Create(ctx, sat(ns, "gone", "1d")); err != nil {
		t.Fatal(err)
	}
	e.wait(ctx, t, ns, "gone", "Ready", func(s *tensorstackv1beta1.ServiceAccountToken) bool {
		return hasReady(s, corev1.ConditionTrue, tensorstackv1beta1.ReasonSubresourcesReady)
	})
	if err := e.c.Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone"}}); err != nil {
		t.Fatal(err)
	}
	s := e.wait(ctx, t, ns, "gone", "SubresourceNotFound", func(s *tensorstackv1beta1.ServiceAccountToken) bool {
		return hasReady(s, corev1.ConditionFalse, tensorstackv1beta1.ReasonSubresourceNotFound)
	})
	want := fmt.Sprintf("subresource not found: ServiceAccount %s/gone has been deleted", ns)
	if msg := s.Status.Conditions[0].Message; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	// Not recreated behind the user's back, by the reconcile that follows
	// a poke or later.
	e.pokeReconciled(ctx, t, ns, "gone")
	time.Sleep(time.Second)
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gone"}, &corev1.ServiceAccount{}); !apierrors.IsNotFound(err) {
		t.Errorf("ServiceAccount after deletion: %v, want NotFound", err)
	}
}

// testConflict: a ServiceAccountToken named after a ServiceAccount that is
// not its own gets no token of it.
func (e *env) testConflict(t *testing.T) {
	ctx := testutil.Context(t)
	ns := testutil.Namespace(t, e.c, "sat", nil)
	if err := e.c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "managed-project-sa"}}); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Create(ctx, sat(ns, "managed-project-sa", "1h")); err != nil {
		t.Fatal(err)
	}
	s := e.wait(ctx, t, ns, "managed-project-sa", "ServiceAccountConflict", func(s *tensorstackv1beta1.ServiceAccountToken) bool {
		return hasReady(s, corev1.ConditionFalse, satoken.ReasonServiceAccountConflict)
	})
	if s.Status.SecretRef != nil {
		t.Errorf("status.secretRef = %+v for a conflicting ServiceAccountToken", s.Status.SecretRef)
	}
}

// testSubresourceFailed: a Secret the API server refuses (here for the
// namespace's quota) is told in the Ready condition and an event, not only
// in the log; once the quota is gone the token is issued.
func (e *env) testSubresourceFailed(t *testing.T) {
	ctx := testutil.Context(t)
	ns := testutil.Namespace(t, e.c, "sat", nil)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-secrets"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/secrets": resource.MustParse("0")}},
	}
	if err := e.c.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(ctx, t, 30*time.Second, "the quota's usage", func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKeyFromObject(quota), quota)
		_, ok := quota.Status.Used["count/secrets"]
		return ok, fmt.Sprintf("%+v", quota.Status), err
	})
	if err := e.c.Create(ctx, sat(ns, "quota", "1h")); err != nil {
		t.Fatal(err)
	}
	s := e.wait(ctx, t, ns, "quota", "Ready False SubresourceFailed", func(s *tensorstackv1beta1.ServiceAccountToken) bool {
		return hasReady(s, corev1.ConditionFalse, satoken.ReasonSubresourceFailed)
	})
	for _, c := range s.Status.Conditions {
		if c.Type == tensorstackv1beta1.ServiceAccountTokenReady && !strings.Contains(c.Message, "quota") {
			t.Errorf("Ready message %q does not quote the API server's refusal", c.Message)
		}
	}
	testutil.Eventually(ctx, t, 30*time.Second, "a SubresourceFailed event", func() (bool, string, error) {
		var list eventsv1.EventList
		if err := e.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		for _, ev := range list.Items {
			if ev.Regarding.Name == "quota" && ev.Reason == satoken.ReasonSubresourceFailed {
				return true, ev.Note, nil
			}
		}
		return false, fmt.Sprintf("%d events", len(list.Items)), nil
	})
	if err := e.c.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	e.poke(ctx, t, ns, "quota")
	e.wait(ctx, t, ns, "quota", "Ready True once the quota is gone", func(s *tensorstackv1beta1.ServiceAccountToken) bool {
		return hasReady(s, corev1.ConditionTrue, tensorstackv1beta1.ReasonSubresourcesReady)
	})
}

// testRefused: a duration that does not match the pattern is refused,
// naming spec.duration.
func (e *env) testRefused(t *testing.T) {
	ctx := testutil.Context(t)
	ns := testutil.Namespace(t, e.c, "sat", nil)
	for _, d := range []string{"1h1w", "10ms", "-1h", "1.5h", ""} {
		err := e.c.Create(ctx, sat(ns, "bad", d))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.duration") {
			t.Errorf("duration %q: %v, want Invalid naming spec.duration", d, err)
		}
	}
	ok := sat(ns, "immutable", "1h")
	if err := e.c.Create(ctx, ok); err != nil {
		t.Fatal(err)
	}
	ok.Spec.Duration = "2h"
	if err := e.c.Update(ctx, ok); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.duration") {
		t.Errorf("changing spec.duration: %v, want Invalid naming spec.duration", err)
	}
}

// testTooLong: a duration beyond the maximum gets no token and says why.
func (e *env) testTooLong(t *testing.T) {
	ctx := testutil.Context(t)
	ns := testutil.Namespace(t, e.c, "sat", nil)
	if err := e.c.Create(ctx, sat(ns, "forever", "3y")); err != nil {
		t.Fatal(err)
	}
	s := e.wait(ctx, t, ns, "forever", "InvalidDuration", func(s *tensorstackv1beta1.ServiceAccountToken) bool {
		return hasReady(s, corev1.ConditionFalse, satoken.ReasonInvalidDuration)
	})
	for _, c := range s.Status.Conditions {
		if !strings.Contains(c.Message, "spec.duration") || !strings.Contains(c.Message, "allows") {
			t.Errorf("message %q does not say that spec.duration is over the limit", c.Message)
		}
	}
	if s.Status.SecretRef != nil || s.Status.ExpirationTime != nil {
		t.Errorf("status %+v: a token was issued", s.Status)
	}
}
