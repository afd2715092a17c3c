package interactive

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/activity"
)

// hexToken is an access token: 32 bytes, hex-encoded.
var hexToken = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestEnsureAccessSecret(t *testing.T) {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "owner", UID: "u1"}}
	var updates int
	w := newWriter(t, &updates, owner)
	labels := map[string]string{"k": "w"}
	created, err := w.EnsureAccessSecret(ctx, owner, "ns", "w-tensorboard", labels)
	if err != nil || !created {
		t.Fatalf("create: %v created %v", err, created)
	}
	got := &corev1.Secret{}
	if err := w.Client.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w-tensorboard-access"}, got); err != nil {
		t.Fatal(err)
	}
	token := string(got.Data[activity.AccessTokenKey])
	if !hexToken.MatchString(token) || !metav1.IsControlledBy(got, owner) || got.Labels["k"] != "w" {
		t.Errorf("Secret %+v: token of %d characters", got.ObjectMeta, len(token))
	}
	// Kept as it is.
	if created, err := w.EnsureAccessSecret(ctx, owner, "ns", "w-tensorboard", labels); err != nil || created || updates != 0 {
		t.Errorf("again: %v created %v updates %d", err, created, updates)
	}
	if err := w.Client.Get(ctx, client.ObjectKeyFromObject(got), got); err != nil || string(got.Data[activity.AccessTokenKey]) != token {
		t.Errorf("the token changed: %v", err)
	}
	// Another's Secret of the name is not used.
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other", UID: "u2"}}
	if _, err := w.EnsureAccessSecret(ctx, other, "ns", "w-tensorboard", labels); !errors.Is(err, ErrNotOwned) {
		t.Errorf("another owner's Secret: %v", err)
	}
	a, _ := AccessSecret("ns", "w", nil)
	b, _ := AccessSecret("ns", "w", nil)
	if string(a.Data[activity.AccessTokenKey]) == string(b.Data[activity.AccessTokenKey]) {
		t.Error("two access Secrets have the same token")
	}
}

func TestNetworkPolicy(t *testing.T) {
	np := NetworkPolicy("ns", "w", map[string]string{"k": "w", "x": "y"}, map[string]string{"k": "w"}, false)
	if len(np.Spec.PodSelector.MatchLabels) != 1 || np.Spec.PodSelector.MatchLabels["k"] != "w" {
		t.Errorf("pod selector %v", np.Spec.PodSelector)
	}
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 {
		t.Fatalf("ingress %+v", np.Spec.Ingress)
	}
	ns := np.Spec.Ingress[0].From[0].NamespaceSelector
	if ns == nil || len(ns.MatchExpressions) != 1 || ns.MatchExpressions[0].Key != corev1.LabelMetadataName ||
		!slices.Equal(ns.MatchExpressions[0].Values, []string{"t9k-system", "accelstack-system"}) {
		t.Errorf("namespace selector %+v", ns)
	}
	var ports []int
	for _, p := range np.Spec.Ingress[0].Ports {
		ports = append(ports, p.Port.IntValue())
	}
	if !slices.Equal(ports, []int{activity.HTTPPort, activity.SSHPort}) {
		t.Errorf("ports %v", ports)
	}
	withSSH := NetworkPolicy("ns", "w", nil, map[string]string{"k": "w"}, true)
	if len(withSSH.Spec.Ingress) != 2 || withSSH.Spec.Ingress[1].From != nil || withSSH.Spec.Ingress[1].Ports[0].Port.IntValue() != activity.SSHPort {
		t.Errorf("with SSH: %+v", withSSH.Spec.Ingress)
	}
}

// TestWriterAccess: a workload gets its access Secret and NetworkPolicy,
// and its sidecar mounts the Secret.
func TestWriterAccess(t *testing.T) {
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "owner", UID: "u1"}}
	var updates int
	w := newWriter(t, &updates, owner)
	dep, err := w.Ensure(ctx, events.NewFakeRecorder(16), owner, testWorkload(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Client.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "w-tensorboard-access"}, &corev1.Secret{}); err != nil {
		t.Errorf("access Secret: %v", err)
	}
	np := NetworkPolicy("ns", "w-tensorboard", nil, nil, false)
	if err := w.Client.Get(ctx, client.ObjectKeyFromObject(np), np); err != nil || !metav1.IsControlledBy(np, owner) {
		t.Errorf("NetworkPolicy: %v", err)
	}
	spec := dep.Spec.Template.Spec
	if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == "w-tensorboard-access"
	}) {
		t.Errorf("volumes %+v", spec.Volumes)
	}
	side := spec.Containers[len(spec.Containers)-1]
	if side.Name != activity.ContainerName || !slices.Contains(side.Args, "--access-token-file=/var/run/t9k/access/token") {
		t.Errorf("sidecar %s args %v", side.Name, side.Args)
	}
	if _, err := w.Ensure(ctx, events.NewFakeRecorder(16), owner, testWorkload(false)); err != nil || updates != 0 {
		t.Errorf("again: %v updates %d", err, updates)
	}
}
