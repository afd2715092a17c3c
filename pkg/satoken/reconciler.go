package satoken

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// Token lifetimes.
const (
	// minLifetime is the shortest token the TokenRequest API issues.
	minLifetime = 10 * time.Minute
	// endlessLifetime is the longest lifetime one token asks for; longer
	// durations are served by renewals.
	endlessLifetime = 365 * 24 * time.Hour
	// DefaultMaxDuration is the longest a ServiceAccountToken issues
	// tokens for, unless configured otherwise; duration 0 means this.
	DefaultMaxDuration = 365 * 24 * time.Hour
	// recheck bounds the time between two looks at a token's Secret, which
	// the controller does not watch.
	recheck = 10 * time.Minute
	// conflictRecheck is how often a token whose name a foreign
	// ServiceAccount holds looks again.
	conflictRecheck = time.Minute
)

// Reasons besides the seed's three.
const (
	// ReasonServiceAccountConflict: a ServiceAccount of the token's name
	// exists and is not the ServiceAccountToken's.
	ReasonServiceAccountConflict = "ServiceAccountConflict"
	// ReasonInvalidDuration: spec.duration does not parse.
	ReasonInvalidDuration = "InvalidDuration"
	// ReasonSubresourceFailed: the API server refused to create or read a
	// subresource, or to issue the first token; the controller retries.
	ReasonSubresourceFailed = "SubresourceFailed"
)

// Reconciler issues and renews the tokens of ServiceAccountTokens.
type Reconciler struct {
	client client.Client
	// reader reads ServiceAccounts and Secrets from the API server.
	reader   client.Reader
	recorder events.EventRecorder
	clock    clock.PassiveClock
	cluster  Cluster
	// maxDuration bounds spec.duration; 0 means DefaultMaxDuration.
	maxDuration time.Duration
}

// NewReconciler returns a Reconciler writing with c, reading the
// ServiceAccounts and Secrets with reader, telling the time by clk (nil
// means the real clock) and writing kubeconfigs for cluster.
func NewReconciler(c client.Client, reader client.Reader, recorder events.EventRecorder, clk clock.PassiveClock, cluster Cluster) *Reconciler {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Reconciler{client: c, reader: reader, recorder: recorder, clock: clk, cluster: cluster}
}

// +kubebuilder:rbac:groups=tensorstack.dev,resources=serviceaccounttokens,verbs=get;list;watch
// +kubebuilder:rbac:groups=tensorstack.dev,resources=serviceaccounttokens/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;update
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=accelstack-project-member
//
// Requesting tokens (serviceaccounts/token create) is not a cluster-wide
// right: the Project controller binds it in each Project namespace
// (ClusterRole accelstack-controllers-project).

// Reconcile issues, renews or expires the token of the ServiceAccountToken
// req names.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	if apierrors.IsConflict(err) {
		// The cache held an older ServiceAccountToken or Secret than the
		// API server: read them again rather than report a fault.
		ctrl.LoggerFrom(ctx).V(3).Info("Object changed meanwhile; reconciling again")
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return res, err
}

// conflictRetry is how soon a reconcile that met a newer version of an
// object than it read runs again.
const conflictRetry = time.Second

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sat := &tensorstackv1beta1.ServiceAccountToken{}
	if err := r.client.Get(ctx, req.NamespacedName, sat); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !sat.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("serviceAccountToken", klog.KObj(sat))
	ctx = ctrl.LoggerInto(ctx, log)
	log.V(2).Info("Reconciling ServiceAccountToken")
	if c := readyCondition(sat); c != nil && c.Status == corev1.ConditionFalse &&
		(c.Reason == tensorstackv1beta1.ReasonTokenExpired || c.Reason == tensorstackv1beta1.ReasonSubresourceNotFound) {
		return ctrl.Result{}, nil // final: the user creates the token again
	}
	d, err := r.duration(sat)
	if err != nil {
		return ctrl.Result{}, r.setReady(ctx, sat, corev1.ConditionFalse, ReasonInvalidDuration, "spec.duration: "+err.Error())
	}
	now := r.clock.Now()
	end := sat.CreationTimestamp.Add(d)
	if exp := sat.Status.ExpirationTime; exp != nil && !now.Before(exp.Time) && !exp.Time.Before(end) {
		log.Info("Token expired", "expirationTime", exp.Time)
		return ctrl.Result{}, r.setReady(ctx, sat, corev1.ConditionFalse, tensorstackv1beta1.ReasonTokenExpired, "This token has expired")
	}
	sa, f, err := r.serviceAccount(ctx, sat)
	if err != nil || f != nil {
		var res ctrl.Result
		if f != nil && f.reason == ReasonServiceAccountConflict {
			// The controller does not watch ServiceAccounts it does not
			// own: it looks again for the conflicting one to be gone.
			res.RequeueAfter = conflictRecheck
		}
		return res, r.fail(ctx, sat, err, f)
	}
	if err := r.roleBinding(ctx, sat); err != nil {
		return ctrl.Result{}, r.fail(ctx, sat, err, nil)
	}
	secret, f, err := r.secret(ctx, sat)
	if err != nil || f != nil {
		return ctrl.Result{}, r.fail(ctx, sat, err, f)
	}
	next, err := r.token(ctx, sat, sa, secret, now, end)
	if err != nil {
		return ctrl.Result{}, r.fail(ctx, sat, err, nil)
	}
	if err := r.setReady(ctx, sat, corev1.ConditionTrue, tensorstackv1beta1.ReasonSubresourcesReady, "All subresources are ready"); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: min(max(next.Sub(now), time.Second), recheck)}, nil
}

// duration returns how long sat issues tokens for: spec.duration, or the
// maximum for 0; a longer duration is an error.
func (r *Reconciler) duration(sat *tensorstackv1beta1.ServiceAccountToken) (time.Duration, error) {
	limit := r.maxDuration
	if limit <= 0 {
		limit = DefaultMaxDuration
	}
	d, err := ParseDuration(sat.Spec.Duration)
	switch {
	case err != nil:
		return 0, err
	case d == 0:
		return limit, nil
	case d > limit:
		return 0, fmt.Errorf("duration %q is longer than the %v the platform allows", sat.Spec.Duration, limit)
	}
	return d, nil
}

// fault is why a ServiceAccountToken has no token to use: the reason and
// message of its Ready condition.
type fault struct{ reason, message string }

// fail reports err, or else the Ready condition False with f. An error
// other than a conflict is also told in an event and, while the token has
// never been issued, in the Ready condition False SubresourceFailed; a
// token already issued stays Ready until it expires. err is returned, so
// the reconcile is retried with backoff.
func (r *Reconciler) fail(ctx context.Context, sat *tensorstackv1beta1.ServiceAccountToken, err error, f *fault) error {
	if err != nil {
		if apierrors.IsConflict(err) {
			return err
		}
		r.recorder.Eventf(sat, nil, corev1.EventTypeWarning, ReasonSubresourceFailed, "Reconcile", "%v", err)
		if sat.Status.ExpirationTime == nil {
			return errors.Join(err, r.setReady(ctx, sat, corev1.ConditionFalse, ReasonSubresourceFailed, err.Error()))
		}
		return err
	}
	r.recorder.Eventf(sat, nil, corev1.EventTypeWarning, f.reason, "Reconcile", "%s", f.message)
	return r.setReady(ctx, sat, corev1.ConditionFalse, f.reason, f.message)
}

// serviceAccount returns the token's ServiceAccount, creating it the first
// time; a fault says why there is none to use.
func (r *Reconciler) serviceAccount(ctx context.Context, sat *tensorstackv1beta1.ServiceAccountToken) (*corev1.ServiceAccount, *fault, error) {
	sa := &corev1.ServiceAccount{}
	err := r.reader.Get(ctx, client.ObjectKeyFromObject(sat), sa)
	switch {
	case apierrors.IsNotFound(err) && sat.Status.SecretRef != nil:
		return nil, &fault{tensorstackv1beta1.ReasonSubresourceNotFound,
			fmt.Sprintf("subresource not found: ServiceAccount %s/%s has been deleted", sat.Namespace, sat.Name)}, nil
	case apierrors.IsNotFound(err):
		sa = &corev1.ServiceAccount{ObjectMeta: r.meta(sat, sat.Name)}
		if err := r.own(sat, sa); err != nil {
			return nil, nil, err
		}
		if err := r.client.Create(ctx, sa); err != nil {
			return nil, nil, fmt.Errorf("creating ServiceAccount %s: %w", sat.Name, err)
		}
		return sa, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("reading ServiceAccount %s: %w", sat.Name, err)
	case !metav1.IsControlledBy(sa, sat):
		return nil, &fault{ReasonServiceAccountConflict,
			fmt.Sprintf("ServiceAccount %s/%s exists and is not this ServiceAccountToken's; choose another name", sat.Namespace, sat.Name)}, nil
	}
	return sa, nil, nil
}

// roleBinding binds the ServiceAccount to MemberClusterRole in the
// namespace.
func (r *Reconciler) roleBinding(ctx context.Context, sat *tensorstackv1beta1.ServiceAccountToken) error {
	rb := &rbacv1.RoleBinding{}
	err := r.reader.Get(ctx, client.ObjectKeyFromObject(sat), rb)
	if err == nil || !apierrors.IsNotFound(err) {
		if err != nil {
			return fmt.Errorf("reading RoleBinding %s: %w", sat.Name, err)
		}
		return nil
	}
	rb = &rbacv1.RoleBinding{
		ObjectMeta: r.meta(sat, sat.Name),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: MemberClusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sat.Namespace, Name: sat.Name}},
	}
	if err := r.own(sat, rb); err != nil {
		return err
	}
	if err := r.client.Create(ctx, rb); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating RoleBinding %s: %w", sat.Name, err)
	}
	return nil
}

// secret returns the token's Secret, creating it and recording it in the
// status the first time; a fault says why there is none to use.
func (r *Reconciler) secret(ctx context.Context, sat *tensorstackv1beta1.ServiceAccountToken) (*corev1.Secret, *fault, error) {
	name := SecretName(sat.Name, sat.UID)
	secret := &corev1.Secret{}
	err := r.reader.Get(quiet(ctx), client.ObjectKey{Namespace: sat.Namespace, Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err) && sat.Status.SecretRef != nil:
		return nil, &fault{tensorstackv1beta1.ReasonSubresourceNotFound,
			fmt.Sprintf("subresource not found: Secret %s/%s has been deleted", sat.Namespace, name)}, nil
	case apierrors.IsNotFound(err):
		secret = &corev1.Secret{ObjectMeta: r.meta(sat, name), Type: corev1.SecretTypeOpaque}
		if err := r.own(sat, secret); err != nil {
			return nil, nil, err
		}
		if err := r.client.Create(ctx, secret); err != nil {
			return nil, nil, fmt.Errorf("creating Secret %s: %w", name, err)
		}
	case err != nil:
		return nil, nil, fmt.Errorf("reading Secret %s: %w", name, err)
	case !metav1.IsControlledBy(secret, sat):
		return nil, &fault{tensorstackv1beta1.ReasonSubresourceNotFound,
			fmt.Sprintf("Secret %s/%s exists and is not this ServiceAccountToken's", sat.Namespace, name)}, nil
	}
	if sat.Status.SecretRef == nil {
		sat.Status.SecretRef = &tensorstackv1beta1.SecretReference{Name: name}
		if err := r.client.Status().Update(ctx, sat); err != nil {
			return nil, nil, fmt.Errorf("recording Secret %s in the status: %w", name, err)
		}
	}
	return secret, nil, nil
}

// token issues a token into secret when it has none or it is due for
// renewal, and returns when to look again.
func (r *Reconciler) token(ctx context.Context, sat *tensorstackv1beta1.ServiceAccountToken, sa *corev1.ServiceAccount, secret *corev1.Secret, now, end time.Time) (time.Time, error) {
	issued, _ := time.Parse(time.RFC3339, secret.Annotations[IssuedAtAnnotationKey])
	exp := sat.Status.ExpirationTime
	final := exp != nil && !exp.Time.Before(end)
	if len(secret.Data[TokenKey]) > 0 && !issued.IsZero() && exp != nil {
		if final {
			return exp.Time, nil
		}
		renewAt := issued.Add(exp.Time.Sub(issued) * 4 / 5)
		if now.Before(renewAt) {
			return renewAt, nil
		}
	}
	lifetime := min(max(end.Sub(now), minLifetime), endlessLifetime)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptrTo(int64(lifetime / time.Second)),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Secret", Name: secret.Name, UID: secret.UID},
	}}
	if err := r.client.SubResource("token").Create(quiet(ctx), sa, tr); err != nil {
		return time.Time{}, fmt.Errorf("requesting a token for ServiceAccount %s: %w", sa.Name, err)
	}
	cfg, err := kubeconfig(r.cluster, sat.Namespace, sat.Name, tr.Status.Token)
	if err != nil {
		return time.Time{}, err
	}
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Annotations[IssuedAtAnnotationKey] = now.UTC().Format(time.RFC3339)
	secret.Data = map[string][]byte{TokenKey: []byte(tr.Status.Token), KubeconfigKey: cfg}
	if err := r.client.Update(quiet(ctx), secret); err != nil {
		return time.Time{}, fmt.Errorf("writing the token into Secret %s: %w", secret.Name, err)
	}
	expiry := tr.Status.ExpirationTimestamp
	sat.Status.ExpirationTime = &expiry
	ctrl.LoggerFrom(ctx).Info("Issued token", "secret", secret.Name, "expirationTime", expiry.Time)
	if !expiry.Time.Before(end) {
		return expiry.Time, nil
	}
	return now.Add(expiry.Time.Sub(now) * 4 / 5), nil
}

// quiet returns ctx with a logger that drops everything, for the API calls
// whose bodies carry a token: client-go traces requests and responses,
// bodies included from -v=8, through the context's logger.
func quiet(ctx context.Context) context.Context {
	return logr.NewContext(ctx, logr.Discard())
}

// meta is the metadata of an object named name the token owns.
func (r *Reconciler) meta(sat *tensorstackv1beta1.ServiceAccountToken, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: sat.Namespace, Name: name, Labels: map[string]string{NameLabelKey: sat.Name}}
}

// own makes sat the controller of obj.
func (r *Reconciler) own(sat *tensorstackv1beta1.ServiceAccountToken, obj client.Object) error {
	if err := controllerutil.SetControllerReference(sat, obj, r.client.Scheme()); err != nil {
		return fmt.Errorf("owning %s: %w", obj.GetName(), err)
	}
	return nil
}

// readyCondition returns the Ready condition of sat, or nil.
func readyCondition(sat *tensorstackv1beta1.ServiceAccountToken) *tensorstackv1beta1.ServiceAccountTokenCondition {
	for i := range sat.Status.Conditions {
		if sat.Status.Conditions[i].Type == tensorstackv1beta1.ServiceAccountTokenReady {
			return &sat.Status.Conditions[i]
		}
	}
	return nil
}

// setReady writes the Ready condition and the rest of sat's status.
func (r *Reconciler) setReady(ctx context.Context, sat *tensorstackv1beta1.ServiceAccountToken, status corev1.ConditionStatus, reason, message string) error {
	cur := &tensorstackv1beta1.ServiceAccountToken{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(sat), cur); err != nil {
		return fmt.Errorf("reading the ServiceAccountToken: %w", err)
	}
	old := cur.Status.DeepCopy()
	cur.Status.SecretRef, cur.Status.ExpirationTime = sat.Status.SecretRef, sat.Status.ExpirationTime
	cond := tensorstackv1beta1.ServiceAccountTokenCondition{
		Type: tensorstackv1beta1.ServiceAccountTokenReady, Status: status, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(r.clock.Now()),
	}
	if c := readyCondition(cur); c != nil {
		if c.Status == status {
			cond.LastTransitionTime = c.LastTransitionTime
		}
		*c = cond
	} else {
		cur.Status.Conditions = append(cur.Status.Conditions, cond)
	}
	if equality.Semantic.DeepEqual(old, &cur.Status) {
		return nil
	}
	if err := r.client.Status().Update(ctx, cur); err != nil {
		return fmt.Errorf("writing the status: %w", err)
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }
