package project

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// DefaultPodSecurity is the Pod Security Standard of a Project that sets
// none and whose QuotaProfile sets none: baseline refuses privileged
// containers, host namespaces, hostPath volumes and added capabilities,
// which give a pod its node and with it every tenant on the node.
const DefaultPodSecurity = tensorstackv1beta1.PodSecurityBaseline

// podSecurityPrefix starts the namespace labels of the API server's Pod
// Security admission.
const podSecurityPrefix = "pod-security.kubernetes.io/"

// PodSecurityAnnotationKey records on a project's namespace the level whose
// Pod Security labels the controller last wrote, so that it can tell its
// own labels from those an administrator set by hand.
const PodSecurityAnnotationKey = "tensorstack.dev/pod-security"

// podSecurityModes are the Pod Security admission modes the controller
// sets: enforce refuses pods, warn answers the client with a warning (for
// pods and for the templates of workloads such as StatefulSets) and audit
// records the violation in the audit log.
var podSecurityModes = []string{"enforce", "warn", "audit"}

// podSecurityLabels returns the namespace labels of level: each mode at
// level, checked against the latest version of the standard.
func podSecurityLabels(level tensorstackv1beta1.PodSecurityLevel) map[string]string {
	l := make(map[string]string, 2*len(podSecurityModes))
	for _, m := range podSecurityModes {
		l[podSecurityPrefix+m] = string(level)
		l[podSecurityPrefix+m+"-version"] = "latest"
	}
	return l
}

// podSecurityLevel returns the level of p: spec.podSecurity, else that of
// its QuotaProfile qp (nil when it names none), else DefaultPodSecurity.
func podSecurityLevel(p *tensorstackv1beta1.Project, qp *tensorstackv1beta1.QuotaProfile) tensorstackv1beta1.PodSecurityLevel {
	switch {
	case p.Spec.PodSecurity != "":
		return p.Spec.PodSecurity
	case qp != nil && qp.PodSecurity != "":
		return qp.PodSecurity
	}
	return DefaultPodSecurity
}

// applyPodSecurity sets the Pod Security labels of level on ns and records
// level in PodSecurityAnnotationKey. A label is set when it is missing, or
// when it holds the value the controller wrote for the level it recorded
// last; a label holding any other value was set by hand and is kept. It
// returns whether ns changed and the labels kept, as "key=value".
func applyPodSecurity(ns *corev1.Namespace, level tensorstackv1beta1.PodSecurityLevel) (changed bool, kept []string) {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	var ours map[string]string
	if last := ns.Annotations[PodSecurityAnnotationKey]; last != "" {
		ours = podSecurityLabels(tensorstackv1beta1.PodSecurityLevel(last))
	}
	for k, v := range podSecurityLabels(level) {
		cur, ok := ns.Labels[k]
		switch {
		case ok && cur == v:
		case !ok || cur == ours[k]:
			ns.Labels[k] = v
			changed = true
		default:
			kept = append(kept, k+"="+cur)
		}
	}
	if ns.Annotations[PodSecurityAnnotationKey] != string(level) {
		if ns.Annotations == nil {
			ns.Annotations = map[string]string{}
		}
		ns.Annotations[PodSecurityAnnotationKey] = string(level)
		changed = true
	}
	slices.Sort(kept)
	return changed, kept
}

// keptMessage says which Pod Security labels set by hand were kept instead
// of level's.
func keptMessage(ns string, level tensorstackv1beta1.PodSecurityLevel, kept []string) string {
	return fmt.Sprintf("namespace %s keeps the Pod Security labels set by hand (%s) instead of %s; remove them to hand them back to the Project",
		ns, strings.Join(kept, ", "), level)
}

// ReasonPodSecurityKept is the reason of the event saying that Pod
// Security labels set by hand on a project's namespace were kept.
const ReasonPodSecurityKept = "PodSecurityKept"

// profile returns the QuotaProfile p names for its Pod Security level, nil
// when it names none or sets spec.podSecurity itself; found is false when
// it names one that does not exist.
func (r *Reconciler) profile(ctx context.Context, p *tensorstackv1beta1.Project) (qp *tensorstackv1beta1.QuotaProfile, found bool, err error) {
	if p.Spec.QuotaProfile == "" || p.Spec.PodSecurity != "" {
		return nil, true, nil
	}
	qp = &tensorstackv1beta1.QuotaProfile{}
	err = r.client.Get(ctx, client.ObjectKey{Name: p.Spec.QuotaProfile}, qp)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading QuotaProfile %s: %w", p.Spec.QuotaProfile, err)
	}
	return qp, true, nil
}

// podSecurity brings the Pod Security labels of the existing namespace ns
// of p to p's level, keeping those set by hand. While the QuotaProfile p
// names is missing, the labels stay as they are (the quota step reports
// it).
func (r *Reconciler) podSecurity(ctx context.Context, p *tensorstackv1beta1.Project, ns *corev1.Namespace) error {
	qp, found, err := r.profile(ctx, p)
	if err != nil || !found {
		return err
	}
	level := podSecurityLevel(p, qp)
	base := ns.DeepCopy()
	changed, kept := applyPodSecurity(ns, level)
	if len(kept) > 0 {
		msg := keptMessage(ns.Name, level, kept)
		ctrl.LoggerFrom(ctx).Info("Kept Pod Security labels set by hand", "namespace", ns.Name, "labels", kept, "level", level)
		r.recorder.Eventf(p, nil, corev1.EventTypeWarning, ReasonPodSecurityKept, "Reconcile", "%s", msg)
	}
	if !changed {
		return nil
	}
	// The optimistic lock keeps a label an administrator sets meanwhile.
	if err := r.client.Patch(ctx, ns, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("setting the Pod Security labels of namespace %s: %w", ns.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Set Pod Security labels", "namespace", ns.Name, "level", level)
	return nil
}
