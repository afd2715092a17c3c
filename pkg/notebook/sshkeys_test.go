package notebook

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const (
	edKey  = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop\n"
	rsaish = "# keys of bob\n\nnot a key\n" + edKey
)

func keySecret(name string, labels map[string]string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, Labels: labels}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestCheckKeySecrets(t *testing.T) {
	sshLabel := map[string]string{ResourceLabelKey: SSHSecretType}
	c := fake.NewClientBuilder().WithObjects(
		keySecret("alice", sshLabel, map[string]string{SSHPublicKeyKey: edKey}),
		keySecret("bob", sshLabel, map[string]string{SSHPublicKeyKey: rsaish, "ssh-privatekey": "PRIVATE"}),
		keySecret("s3", map[string]string{ResourceLabelKey: "s3-cfg"}, map[string]string{".s3cfg": "secret_key = SECRET"}),
		keySecret("unlabelled", nil, map[string]string{SSHPublicKeyKey: edKey}),
		keySecret("nokey", sshLabel, map[string]string{"id_rsa.pub": edKey}),
		keySecret("garbage", sshLabel, map[string]string{SSHPublicKeyKey: "GARBAGE-VALUE"}),
	).Build()

	for _, tc := range []struct {
		name      string
		keys      []string
		disabled  bool
		wantValid []string
		wantCond  condition
	}{
		{name: "valid", keys: []string{"alice", "bob", "alice"}, wantValid: []string{"alice", "bob"},
			wantCond: condition{"True", ReasonKeysMounted, "The public keys of Secrets alice, bob are mounted"}},
		{name: "none named", wantCond: condition{"True", ReasonKeysMounted, "No authorized keys are named: nobody can log in"}},
		{name: "missing", keys: []string{"alice", "nobody"}, wantValid: []string{"alice"},
			wantCond: condition{"False", ReasonSecretNotFound, "Secret nobody not found"}},
		{name: "wrong type", keys: []string{"s3"},
			wantCond: condition{"False", ReasonSecretInvalid, `Secret s3 is of type "s3-cfg" (label tensorstack.dev/resource), want ssh (SSH Public Key)`}},
		{name: "unlabelled", keys: []string{"unlabelled"},
			wantCond: condition{"False", ReasonSecretInvalid, "Secret unlabelled has no label tensorstack.dev/resource: ssh (SSH Public Key)"}},
		{name: "no key", keys: []string{"nokey", "garbage", "alice"}, wantValid: []string{"alice"},
			wantCond: condition{"False", ReasonSecretInvalid, "Secret nokey has no key ssh-publickey; Secret garbage: key ssh-publickey holds no SSH public key in the authorized_keys format"}},
		{name: "disabled", keys: []string{"nobody"}, disabled: true, wantCond: condition{"True", ReasonKeysMounted, "No authorized keys are named: nobody can log in"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nb := makeNotebook("demo", "nb").ssh("", tc.keys...).obj()
			nb.Spec.SSH.Enabled = !tc.disabled
			ks, err := checkKeySecrets(context.Background(), c, nb)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantValid, ks.valid); diff != "" {
				t.Errorf("valid (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCond, keysCondition(ks), cmp.AllowUnexported(condition{})); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
			for _, v := range []string{"SECRET", "GARBAGE-VALUE", "PRIVATE", "AAAAC3"} {
				if msg := keysCondition(ks).message; strings.Contains(msg, v) {
					t.Errorf("message %q holds a Secret's value", msg)
				}
			}
		})
	}

	t.Run("API error", func(t *testing.T) {
		broken := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
			Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return errors.New("connection refused")
			},
		}).Build()
		_, err := checkKeySecrets(context.Background(), broken, makeNotebook("demo", "nb").ssh("", "alice").obj())
		if err == nil {
			t.Error("an API failure was not an error")
		}
	})
}
