package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/manager"
	"github.com/accelstack/accelstack/test/harness"
)

const webhookDNS = "controllers-webhook.accelstack-system.svc"

// crdCAPool returns the CA bundle injected into the converted CRD.
func crdCAPool(ctx context.Context, t *testing.T, c client.Client) (*x509.CertPool, []byte) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: manager.ConvertedCRDs[0]}, crd); err != nil {
		t.Fatal(err)
	}
	bundle := crd.Spec.Conversion.Webhook.ClientConfig.CABundle
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundle) {
		t.Fatal("CRD caBundle holds no certificate")
	}
	return pool, bundle
}

// TestSelfSignedWebhookCert checks that the certificate the controllers
// issue themselves verifies against the CA they inject into the CRD, for the
// webhook Service's name, and that the key is private to its owner.
func TestSelfSignedWebhookCert(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	harness.CreateNamespace(ctx, t, cp.Client, "accelstack-system")
	dir := t.TempDir()
	if _, err := manager.SelfSignedWebhookCert(ctx, cp.Client, dir, webhookDNS, manager.ConvertedCRDs); err != nil {
		t.Fatal(err)
	}
	pool, _ := crdCAPool(ctx, t, cp.Client)
	certPEM, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatalf("tls.crt and tls.key do not make a pair: %v\n%s", err, certPEM)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: webhookDNS, Roots: pool}); err != nil {
		t.Errorf("serving certificate does not verify for %s against the injected CA: %v", webhookDNS, err)
	}
	st, err := os.Stat(filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatalf("tls.key: %v", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("tls.key mode %v; want readable by its owner only", st.Mode().Perm())
	}
}

// runManager runs manager.Run as cmd/controllers does (self-signed webhook
// certificate) on free ports until the returned stop is called.
func runManager(t *testing.T, cp *harness.ControlPlane) (webhookAddr, probeAddr string, stop func()) {
	t.Helper()
	whPort, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	probePort, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- manager.Run(ctx, cp.Config, manager.Options{
			MetricsAddr:        "0",
			ProbeAddr:          "127.0.0.1:" + strconv.Itoa(probePort),
			WebhookHost:        "127.0.0.1",
			WebhookPort:        whPort,
			WebhookCertDir:     t.TempDir(),
			WebhookSelfSigned:  true,
			WebhookServiceDNS:  webhookDNS,
			SkipNameValidation: true,
		})
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with error: %v", err)
		}
	}
	t.Cleanup(stop)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(whPort)), net.JoinHostPort("127.0.0.1", strconv.Itoa(probePort)), stop
}

// servedLeaf waits until addr serves TLS and returns its certificate.
func servedLeaf(ctx context.Context, t *testing.T, addr string) *x509.Certificate {
	t.Helper()
	var leaf *x509.Certificate
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test verifies the certificate itself
		if err != nil {
			return false, nil
		}
		defer conn.Close()
		leaf = conn.ConnectionState().PeerCertificates[0]
		return true, nil
	})
	if err != nil {
		t.Fatalf("webhook at %s never served TLS: %v", addr, err)
	}
	return leaf
}

// TestWebhookCertTwoReplicas runs two managers against one apiserver, as
// two replicas: both serve certificates that the CA injected into the CRD
// verifies, and a restarted replica keeps that CA.
func TestWebhookCertTwoReplicas(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	harness.CreateNamespace(ctx, t, cp.Client, "accelstack-system")

	addrA, probeA, stopA := runManager(t, cp)
	addrB, _, _ := runManager(t, cp)
	leafA, leafB := servedLeaf(ctx, t, addrA), servedLeaf(ctx, t, addrB)
	pool, bundle := crdCAPool(ctx, t, cp.Client)
	for name, leaf := range map[string]*x509.Certificate{"A": leafA, "B": leafB} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: webhookDNS, Roots: pool}); err != nil {
			t.Errorf("replica %s serves a certificate the CRD's CA does not verify: %v", name, err)
		}
	}

	t.Run("ready once the webhook serves", func(t *testing.T) {
		var body string
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+probeA+"/readyz?verbose", nil)
			if err != nil {
				return false, err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return false, nil
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body = string(b)
			return resp.StatusCode == http.StatusOK, nil
		})
		if err != nil {
			t.Fatalf("/readyz never ready: %v; last answer:\n%s", err, body)
		}
		if !strings.Contains(body, "[+]webhook ok") {
			t.Errorf("/readyz does not check the webhook:\n%s", body)
		}
	})

	t.Run("a restart keeps the CA", func(t *testing.T) {
		stopA()
		addrA2, _, _ := runManager(t, cp)
		leaf := servedLeaf(ctx, t, addrA2)
		pool, after := crdCAPool(ctx, t, cp.Client)
		if string(after) != string(bundle) {
			t.Error("the CRD's CA bundle changed at the restart")
		}
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: webhookDNS, Roots: pool}); err != nil {
			t.Errorf("restarted replica serves a certificate the CRD's CA does not verify: %v", err)
		}
		secret := &corev1.Secret{}
		if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "accelstack-system", Name: manager.WebhookCertSecretName}, secret); err != nil {
			t.Fatal(err)
		}
		if secret.CreationTimestamp.Equal(&metav1.Time{}) || string(secret.Data["ca.crt"]) != string(bundle) {
			t.Error("the certificate Secret does not hold the CA the CRD trusts")
		}
	})
}
