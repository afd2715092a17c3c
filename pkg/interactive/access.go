package interactive

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/project"
)

// AccessSecretSuffix ends the name of a workload's access Secret. The
// controllers' admission policy (deploy/controllers/policies.yaml) lets
// them create only Secrets named <label value>-access that carry the
// workload label of a Notebook, TensorBoard or Explorer.
const AccessSecretSuffix = "-access"

// AccessSecretName returns the name of the access Secret of the workload
// child name (the name of its Deployment or StatefulSet, at most 63
// characters as ObjectName makes it): name-access, within a Secret's 253.
func AccessSecretName(name string) string { return name + AccessSecretSuffix }

// ErrNoAccessSecret is returned by AccessToken when the workload has no
// access Secret: not made yet, or a sidecar from before access tokens.
var ErrNoAccessSecret = errors.New("has no access Secret")

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// AccessToken returns the token of the access Secret of the workload child
// name of owner, read through reader. The Secret must be controlled by
// owner: one of that name someone else made is ErrNotOwned, and its token
// is never returned. A missing Secret is ErrNoAccessSecret. Nothing here
// logs or returns the token in an error.
func AccessToken(ctx context.Context, reader client.Reader, owner metav1.Object, name string) (string, error) {
	secretName := AccessSecretName(name)
	secret := &corev1.Secret{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: owner.GetNamespace(), Name: secretName}, secret)
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("%s %w", owner.GetName(), ErrNoAccessSecret)
	}
	if err != nil {
		return "", fmt.Errorf("reading the access Secret %s: %w", secretName, err)
	}
	if !metav1.IsControlledBy(secret, owner) {
		return "", fmt.Errorf("the access Secret %s %w", secretName, ErrNotOwned)
	}
	token := string(secret.Data[activity.AccessTokenKey])
	if token == "" {
		return "", fmt.Errorf("the access Secret %s holds no token", secretName)
	}
	return token, nil
}

// accessTokenBytes is the size of an access token, before hex encoding.
const accessTokenBytes = 32

// AccessSecret returns a new access Secret of the workload child name of
// namespace, labelled with labels, holding a fresh token of
// accessTokenBytes random bytes, hex-encoded, at activity.AccessTokenKey.
// It is immutable: the token of a workload changes only when its Secret is
// deleted (the controller makes a new one) and its pod restarted.
func AccessSecret(namespace, name string, labels map[string]string) (*corev1.Secret, error) {
	b := make([]byte, accessTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("making an access token: %w", err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: AccessSecretName(name), Labels: merge(labels, nil)},
		Type:       corev1.SecretTypeOpaque,
		Immutable:  ptr.To(true),
		Data:       map[string][]byte{activity.AccessTokenKey: []byte(hex.EncodeToString(b))},
	}, nil
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update

// EnsureAccessSecret creates the access Secret of the workload child name
// of namespace, controlled by owner and labelled with labels, unless owner
// has it already; it never rewrites one. Secrets are not cached: it reads
// the API server with APIReader. A Secret of the name that is not owner's
// is ErrNotOwned, and the workload must not use it. It reports whether it
// created the Secret. Nothing here logs or returns the token.
func (w Writer) EnsureAccessSecret(ctx context.Context, owner client.Object, namespace, name string, labels map[string]string) (bool, error) {
	key := client.ObjectKey{Namespace: namespace, Name: AccessSecretName(name)}
	got := &corev1.Secret{}
	err := w.APIReader.Get(ctx, key, got)
	if err == nil {
		return false, ownedSecret(got, owner)
	}
	if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("getting Secret %s: %w", key.Name, err)
	}
	want, err := AccessSecret(namespace, name, labels)
	if err != nil {
		return false, err
	}
	if err := controllerutil.SetControllerReference(owner, want, w.Scheme); err != nil {
		return false, fmt.Errorf("owning Secret %s: %w", key.Name, err)
	}
	if err := w.Client.Create(ctx, want); apierrors.IsAlreadyExists(err) {
		if err := w.APIReader.Get(ctx, key, got); err != nil {
			return false, fmt.Errorf("getting Secret %s: %w", key.Name, err)
		}
		return false, ownedSecret(got, owner)
	} else if err != nil {
		return false, fmt.Errorf("creating Secret %s: %w", key.Name, err)
	}
	return true, nil
}

// ownedSecret returns nil when owner controls secret, else ErrNotOwned.
func ownedSecret(secret *corev1.Secret, owner client.Object) error {
	if metav1.IsControlledBy(secret, owner) {
		return nil
	}
	return fmt.Errorf("the Secret %s %w", secret.Name, ErrNotOwned)
}

// SystemNamespaces are the namespaces whose pods a workload's
// NetworkPolicy admits: the platform's entry point and consoles
// (t9k-system) and the controllers (accelstack-system), as a Project's
// default NetworkPolicy does.
var SystemNamespaces = project.DefaultPolicyNamespaces

// NetworkPolicy returns the NetworkPolicy of the workload child name of
// namespace, labelled with labels: the pods that selector selects take
// connections only from pods of SystemNamespaces, on the sidecar's HTTP and
// SSH ports, and, when openSSH, from anywhere on the SSH port, where sshd
// authenticates the clients by key (an SSH Service may be a NodePort or
// LoadBalancer). It constrains nothing where the cluster's network plugin
// does not enforce NetworkPolicies; the sidecar's access token does.
func NetworkPolicy(namespace, name string, labels, selector map[string]string, openSSH bool) *networkingv1.NetworkPolicy {
	port := func(p int) networkingv1.NetworkPolicyPort {
		return networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt(p))}
	}
	rules := []networkingv1.NetworkPolicyIngressRule{{
		From: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: slices.Clone(SystemNamespaces),
			}}},
		}},
		Ports: []networkingv1.NetworkPolicyPort{port(activity.HTTPPort), port(activity.SSHPort)},
	}}
	if openSSH {
		rules = append(rules, networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{port(activity.SSHPort)}})
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: merge(labels, nil)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: merge(selector, nil)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     rules,
		},
	}
}

// EnsureNetworkPolicy creates the NetworkPolicy want, controlled by owner,
// or updates the labels and spec of the one there when its spec hash
// differs. It reports whether it created it.
func (w Writer) EnsureNetworkPolicy(ctx context.Context, owner client.Object, want *networkingv1.NetworkPolicy) (bool, error) {
	_, created, err := write(ctx, w, owner, want, &networkingv1.NetworkPolicy{}, want.Spec, func(got, want *networkingv1.NetworkPolicy) {
		got.Spec = want.Spec
	})
	return created, err
}
