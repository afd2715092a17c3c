package testutil

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// accessToken is the form of an access token: 32 bytes, hex-encoded.
var accessToken = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Access is what CheckAccess checks of a Notebook's, TensorBoard's or
// Explorer's child.
type Access struct {
	// Namespace and Name of the child (its Deployment or StatefulSet).
	Namespace, Name string
	// Owner is the workload, read again for its status.
	Owner client.Object
	// Selector selects the child's pods.
	Selector map[string]string
	// Pod is the child's pod spec.
	Pod corev1.PodSpec
	// Log is what the controllers logged.
	Log func() string
}

// CheckAccess checks the access objects of a workload child and returns
// its token: the access Secret exists, owned by the workload, with a
// token of 64 hex digits; the sidecar mounts it read-only and is told the
// file; the NetworkPolicy of the child's name, owned by the workload,
// admits only the platform's namespaces to the sidecar's ports of the
// selected pods; and the token is in no container argument or variable,
// no event of the namespace, not the workload's status, not the log.
func CheckAccess(ctx context.Context, t testing.TB, c client.Client, a Access) string {
	t.Helper()
	secret := &corev1.Secret{}
	Poll(ctx, t, "access Secret of "+a.Name, func() (bool, string, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: interactive.AccessSecretName(a.Name)}, secret)
		return err == nil, fmt.Sprint(err), nil
	})
	token := string(secret.Data[activity.AccessTokenKey])
	if !accessToken.MatchString(token) {
		t.Errorf("access Secret %s: a token of %d characters, want 64 hex digits", secret.Name, len(token))
	}
	if !metav1.IsControlledBy(secret, a.Owner) {
		t.Errorf("access Secret %s owners %v", secret.Name, secret.OwnerReferences)
	}
	for k, v := range a.Selector {
		if secret.Labels[k] != v {
			t.Errorf("access Secret %s labels %v, want %s=%s", secret.Name, secret.Labels, k, v)
		}
	}

	checkSidecar(t, a.Pod, secret.Name)

	np := &networkingv1.NetworkPolicy{}
	Poll(ctx, t, "NetworkPolicy "+a.Name, func() (bool, string, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Name}, np)
		return err == nil, fmt.Sprint(err), nil
	})
	checkPolicy(t, np, a)

	mustNotHold(t, "the pod spec", a.Pod, token)
	owner := a.Owner.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(a.Owner), owner); err != nil {
		t.Fatal(err)
	}
	mustNotHold(t, "the workload", owner, token)
	var events eventsv1.EventList
	if err := c.List(ctx, &events, client.InNamespace(a.Namespace)); err != nil {
		t.Fatal(err)
	}
	mustNotHold(t, "the events", events.Items, token)
	if a.Log != nil && strings.Contains(a.Log(), token) {
		t.Error("the controllers logged an access token")
	}
	return token
}

// checkSidecar checks that the sidecar of pod, and it alone, mounts the
// access Secret secret read-only and reads the token from the file.
func checkSidecar(t testing.TB, pod corev1.PodSpec, secret string) {
	t.Helper()
	i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == secret })
	if i < 0 {
		t.Errorf("no volume of the access Secret %s in %+v", secret, pod.Volumes)
		return
	}
	vol := pod.Volumes[i].Name
	for _, ctr := range pod.Containers {
		mounted := slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == vol && m.ReadOnly && m.MountPath == activity.AccessTokenDir
		})
		if ctr.Name != activity.ContainerName {
			if slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == vol }) {
				t.Errorf("container %s mounts the access Secret", ctr.Name)
			}
			continue
		}
		if !mounted {
			t.Errorf("the sidecar mounts %+v, want %s read-only at %s", ctr.VolumeMounts, vol, activity.AccessTokenDir)
		}
		if !slices.Contains(ctr.Args, "--access-token-file="+activity.AccessTokenDir+"/"+activity.AccessTokenKey) {
			t.Errorf("sidecar args %q, want the access token file", ctr.Args)
		}
	}
}

// checkPolicy checks the NetworkPolicy np of a.
func checkPolicy(t testing.TB, np *networkingv1.NetworkPolicy, a Access) {
	t.Helper()
	if !metav1.IsControlledBy(np, a.Owner) {
		t.Errorf("NetworkPolicy %s owners %v", np.Name, np.OwnerReferences)
	}
	if !maps.Equal(np.Spec.PodSelector.MatchLabels, a.Selector) || len(np.Spec.PodSelector.MatchExpressions) != 0 {
		t.Errorf("NetworkPolicy %s pod selector %+v, want %v", np.Name, np.Spec.PodSelector, a.Selector)
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) || len(np.Spec.Ingress) == 0 {
		t.Fatalf("NetworkPolicy %s types %v ingress %+v", np.Name, np.Spec.PolicyTypes, np.Spec.Ingress)
	}
	rule := np.Spec.Ingress[0]
	var ports []int
	for _, p := range rule.Ports {
		ports = append(ports, p.Port.IntValue())
	}
	if !slices.Equal(ports, []int{activity.HTTPPort, activity.SSHPort}) {
		t.Errorf("NetworkPolicy %s ports %v", np.Name, ports)
	}
	if len(rule.From) != 1 || rule.From[0].PodSelector != nil || rule.From[0].NamespaceSelector == nil ||
		len(rule.From[0].NamespaceSelector.MatchExpressions) != 1 {
		t.Fatalf("NetworkPolicy %s peers %+v", np.Name, rule.From)
	}
	expr := rule.From[0].NamespaceSelector.MatchExpressions[0]
	if expr.Key != corev1.LabelMetadataName || expr.Operator != metav1.LabelSelectorOpIn ||
		!slices.Equal(slices.Sorted(slices.Values(expr.Values)), []string{"accelstack-system", "t9k-system"}) {
		t.Errorf("NetworkPolicy %s namespaces %+v", np.Name, expr)
	}
	for _, r := range np.Spec.Ingress[1:] {
		if len(r.From) != 0 || len(r.Ports) != 1 || r.Ports[0].Port.IntValue() != activity.SSHPort {
			t.Errorf("NetworkPolicy %s admits %+v beyond SSH", np.Name, r)
		}
	}
}

// mustNotHold fails the test when the JSON of obj, named what, holds value.
func mustNotHold(t testing.TB, what string, obj any, value string) {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), value) {
		t.Errorf("%s holds the access token", what)
	}
}
