package harness

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/directory"
	"github.com/accelstack/accelstack/pkg/gateway"
)

// Gateway is a gateway serving HTTPS in-process.
type Gateway struct {
	*httptest.Server
	// CAFile holds the PEM of the certificate the gateway serves with.
	CAFile string
}

// StartGateway starts a gateway that reaches the API server with cfg
// (whose user must hold the gateway's rights, deploy/gateway/rbac.yaml),
// with a password login over a users file of users (name to password) in
// dir. The password login needs no identity provider: the provider's
// URLs are never called. Close stops it.
func StartGateway(ctx context.Context, cfg *rest.Config, dir string, users map[string]string) (*Gateway, error) {
	var list strings.Builder
	list.WriteString("users:\n")
	for name, password := range users {
		hash, err := directory.HashPassword(password)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&list, "- name: %s\n  passwordHash: '%s'\n", name, hash)
	}
	write := func(name, content string) (string, error) {
		p := filepath.Join(dir, name)
		return p, os.WriteFile(p, []byte(content), 0o600)
	}
	opts := gateway.DefaultOptions()
	opts.CacheTTL = 0
	opts.Host = "platform.example.com"
	opts.Login.Issuer, opts.Login.AdminURL = "https://127.0.0.1:1/", "http://127.0.0.1:1"
	var err error
	for _, f := range []struct {
		into          *string
		name, content string
	}{
		{&opts.Login.UsersFile, "users.yaml", list.String()},
		{&opts.Login.ClientSecretFile, "client-secret", "secret"},
		{&opts.Login.SessionKeyFile, "session-key", strings.Repeat("k", 40)},
	} {
		if *f.into, err = write(f.name, f.content); err != nil {
			return nil, err
		}
	}
	g, err := gateway.New(ctx, cfg, opts, logr.Discard(), prometheus.NewRegistry())
	if err != nil {
		return nil, err
	}
	srv := httptest.NewTLSServer(g.Handler())
	ca, err := write("gateway-ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &Gateway{Server: srv, CAFile: ca}, nil
}

// ServiceAccountToken creates the ServiceAccount ns/name unless it exists
// and returns a token of it for the API server's audience, valid for the
// TokenRequest's default hour.
func ServiceAccountToken(ctx context.Context, c client.Client, ns, name string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("creating ServiceAccount %s/%s: %w", ns, name, err)
	}
	req := &authenticationv1.TokenRequest{}
	if err := c.SubResource("token").Create(ctx, sa, req); err != nil {
		return "", fmt.Errorf("a token of %s/%s: %w", ns, name, err)
	}
	return req.Status.Token, nil
}
