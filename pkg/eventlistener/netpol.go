package eventlistener

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update

// triggerNetworkPolicy returns the NetworkPolicy of a trigger's pods,
// labelled as its other objects: ingress on the server's port from the
// pods of the given listeners of its namespace only. Without a listener it
// admits nothing. A rule without peers would admit everyone, so none is
// written then.
func triggerNetworkPolicy(namespace, name string, labels map[string]string, listeners []*triggersv1beta1.EventListener) *networkingv1.NetworkPolicy {
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{WorkflowEventsLabelKey: name}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{},
		},
	}
	var peers []networkingv1.NetworkPolicyPeer
	for _, el := range listeners {
		peers = append(peers, networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{WorkflowEventsLabelKey: ListenerObjectName(el.Name, el.UID)},
		}})
	}
	if len(peers) > 0 {
		np.Spec.Ingress = append(np.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{
			From:  peers,
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(serverconfig.Port))}},
		})
	}
	return np
}

// existingListeners returns the listeners the trigger names that exist,
// and the names of those that do not.
func (r *TriggerReconciler) existingListeners(ctx context.Context, wt *triggersv1beta1.WorkflowTrigger) ([]*triggersv1beta1.EventListener, []string, error) {
	var found []*triggersv1beta1.EventListener
	var missing []string
	for _, name := range listenerNames(wt) {
		el := &triggersv1beta1.EventListener{}
		err := r.client.Get(ctx, types.NamespacedName{Namespace: wt.Namespace, Name: name}, el)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
		case err != nil:
			return nil, nil, fmt.Errorf("getting EventListener %s: %w", name, err)
		default:
			found = append(found, el)
		}
	}
	return found, missing, nil
}

// ensureNetworkPolicy creates the NetworkPolicy want, owned by owner, or
// updates the spec of the one there when its spec hash differs.
func (w objectWriter) ensureNetworkPolicy(ctx context.Context, owner client.Object, want *networkingv1.NetworkPolicy) error {
	hash, err := specHash(want.Spec)
	if err != nil {
		return err
	}
	setHash(&want.ObjectMeta, hash)
	got := &networkingv1.NetworkPolicy{}
	err = w.reader.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		if err := controllerutil.SetControllerReference(owner, want, w.scheme); err != nil {
			return fmt.Errorf("owning NetworkPolicy %s: %w", want.Name, err)
		}
		if err := w.client.Create(ctx, want); apierrors.IsAlreadyExists(err) {
			return w.taken(ctx, owner, want, "NetworkPolicy")
		} else if err != nil {
			return fmt.Errorf("creating NetworkPolicy %s: %w", want.Name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting NetworkPolicy %s: %w", want.Name, err)
	}
	if !metav1.IsControlledBy(got, owner) {
		return fmt.Errorf("the NetworkPolicy %s exists and is not %s's", want.Name, owner.GetName())
	}
	if got.Annotations[SpecHashAnnotationKey] == hash {
		return nil
	}
	got = got.DeepCopy()
	got.Labels, got.Annotations, got.Spec = want.Labels, mergeHash(got.Annotations, hash), want.Spec
	if err := w.client.Update(ctx, got); err != nil {
		return fmt.Errorf("updating NetworkPolicy %s: %w", want.Name, err)
	}
	return nil
}
