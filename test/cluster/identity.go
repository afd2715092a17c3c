package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelstack/accelstack/pkg/directory"
)

// The browser login of the local cluster: the gateway's address, and the
// user Install creates, in the group DemoGroup, with a random password
// kept in the state directory (DemoPassword).
const (
	GatewayURL = "https://" + GatewayIP + ":8443"
	// OIDCIssuer is Hydra's issuer, at the gateway; OIDCClientID the
	// gateway's client, whose ID tokens the API server accepts.
	OIDCIssuer   = GatewayURL + "/t9k/security/oidc"
	OIDCClientID = "t9k-client"
	// ServingDomain is the gateway's serving domain: a SimpleMLService s
	// of namespace ns answers at https://s.ns.<ServingDomain>:8443, on
	// the gateway's address (the host has no name for it).
	ServingDomain = "apps.accelstack.local"
	DemoUser      = "demo"
	DemoGroup     = "demo-users"
)

// usersSecret is the Secret of the gateway's users file (deploy/gateway),
// tlsSecret that of its serving certificate, issued by the cluster's CA.
const (
	usersSecret = "gateway-users"
	tlsSecret   = "gateway-tls"
)

// DemoPassword returns the demo user's password.
func (c *Cluster) DemoPassword() (string, error) {
	b, err := os.ReadFile(c.l.path("demo-password"))
	if err != nil {
		return "", fmt.Errorf("the demo user's password: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// createIdentity writes the gateway's users file, with the demo user, and
// its serving certificate into their Secrets before the gateway starts.
// The password is made once per state directory, so a second install
// keeps it.
func (c *Cluster) createIdentity(ctx context.Context) error {
	password, err := c.DemoPassword()
	if errors.Is(err, fs.ErrNotExist) {
		password = rand.Text()
		err = os.WriteFile(c.l.path("demo-password"), []byte(password+"\n"), 0o600)
	}
	if err != nil {
		return err
	}
	hash, err := directory.HashPassword(password)
	if err != nil {
		return err
	}
	users := fmt.Sprintf("users:\n  - name: %s\n    passwordHash: %q\n    groups: [%s]\n", DemoUser, hash, DemoGroup)
	cs, err := c.Client()
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", Namespace, err)
	}
	crt, err := os.ReadFile(c.l.pki("gateway.crt"))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(c.l.pki("gateway.key"))
	if err != nil {
		return err
	}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: usersSecret}, StringData: map[string]string{"users.yaml": users}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: tlsSecret}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}},
	} {
		secrets := cs.CoreV1().Secrets(Namespace)
		_, err = secrets.Create(ctx, s, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("writing the Secret %s/%s: %w", Namespace, s.Name, err)
		}
	}
	return nil
}
