package integration

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/manager"
	"github.com/accelstack/accelstack/test/harness"
)

// TestSelfSignedWebhookCert checks that the certificate the controllers
// issue themselves verifies against the CA they inject into the CRD, for the
// webhook Service's name.
func TestSelfSignedWebhookCert(t *testing.T) {
	cp := harness.StartControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	const dns = "controllers-webhook.accelstack-system.svc"
	if err := manager.SelfSignedWebhookCert(ctx, cp.Client, dir, dns, manager.ConvertedCRDs); err != nil {
		t.Fatal(err)
	}

	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cp.Client.Get(ctx, client.ObjectKey{Name: manager.ConvertedCRDs[0]}, crd); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(crd.Spec.Conversion.Webhook.ClientConfig.CABundle) {
		t.Fatal("CRD caBundle holds no certificate")
	}
	certPEM, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("tls.crt is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: dns, Roots: pool}); err != nil {
		t.Errorf("serving certificate does not verify for %s against the injected CA: %v", dns, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "tls.key")); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Errorf("tls.key: %v, mode %v; want readable by its owner only", err, st.Mode().Perm())
	}
}
