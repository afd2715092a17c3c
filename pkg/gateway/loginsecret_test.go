package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/accelstack/accelstack/pkg/directory"
)

func TestLoginSecrets(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}

	t.Run("created when missing, then the same values", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(scheme).Build()
		secret, key, err := loginSecrets(ctx, c, "accelstack-system", "gateway-login")
		if err != nil {
			t.Fatal(err)
		}
		if len(secret) < 20 || len(key) < 32 || secret == key {
			t.Errorf("client secret %d bytes, session key %d bytes: want distinct random values", len(secret), len(key))
		}
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: "accelstack-system", Name: "gateway-login"}, &s); err != nil {
			t.Fatal(err)
		}
		if len(s.Data[HydraSystemKey]) < 32 {
			t.Errorf("Hydra's system secret is %d bytes", len(s.Data[HydraSystemKey]))
		}
		secret2, key2, err := loginSecrets(ctx, c, "accelstack-system", "gateway-login")
		if err != nil || secret2 != secret || key2 != key {
			t.Errorf("a second replica got other values (%v)", err)
		}
	})

	t.Run("a site's own Secret is used and never changed", func(t *testing.T) {
		own := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "accelstack-system", Name: "gateway-login"},
			Data:       map[string][]byte{ClientSecretKey: []byte("site-secret"), SessionKeyKey: []byte(strings.Repeat("k", 40))},
		}
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(own).Build()
		secret, key, err := loginSecrets(ctx, c, "accelstack-system", "gateway-login")
		if err != nil || secret != "site-secret" || key != strings.Repeat("k", 40) {
			t.Errorf("got %q, %q, %v; want the site's values", secret, key, err)
		}
	})

	t.Run("a Secret without the keys is an error, not replaced", func(t *testing.T) {
		own := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "accelstack-system", Name: "gateway-login"}}
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(own).Build()
		if _, _, err := loginSecrets(ctx, c, "accelstack-system", "gateway-login"); err == nil || !strings.Contains(err.Error(), ClientSecretKey) {
			t.Errorf("got %v, want an error naming %s", err, ClientSecretKey)
		}
	})
}

func TestNewDirectory(t *testing.T) {
	missing := t.TempDir() + "/users.yaml"
	for _, tc := range []struct {
		name    string
		opts    LoginOptions
		wantErr string
	}{
		{"none", LoginOptions{}, "needs a directory"},
		{"both", LoginOptions{UsersFile: missing, LDAP: directory.LDAPConfig{URL: "ldap://x"}}, "not both"},
		{"a users file not there yet", LoginOptions{UsersFile: missing}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := newDirectory(tc.opts, logr.Discard())
			if tc.wantErr == "" {
				if err != nil || d == nil {
					t.Errorf("newDirectory = %v, %v; want a directory", d, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("newDirectory error %v, want one with %q", err, tc.wantErr)
			}
		})
	}
}
