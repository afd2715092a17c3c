package manager

import (
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const testDNS = "controllers-webhook.accelstack-system.svc"

var secretKey = client.ObjectKey{Namespace: "accelstack-system", Name: WebhookCertSecretName}

func newFakeClient(t *testing.T, funcs *interceptor.Funcs) client.Client {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: ConvertedCRDs[0]},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Conversion: &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook:  &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{}, ConversionReviewVersions: []string{"v1"}},
		}},
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(crd)
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return b.Build()
}

// servedCert returns the serving certificate in dir, checked to verify for
// testDNS against the CA bundle injected into the CRD.
func servedCert(ctx context.Context, t *testing.T, c client.Client, dir string) *x509.Certificate {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: ConvertedCRDs[0]}, crd); err != nil {
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
	cert, err := parseCert(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: testDNS, Roots: pool}); err != nil {
		t.Errorf("serving certificate in %s does not verify against the CRD's CA: %v", dir, err)
	}
	return cert
}

func caOf(ctx context.Context, t *testing.T, c client.Client) []byte {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(ctx, secretKey, s); err != nil {
		t.Fatal(err)
	}
	return s.Data[secretCACert]
}

// TestWebhookCertSharedAndKept plays two replicas and a restart: all serve
// certificates of one CA, kept in the Secret.
func TestWebhookCertSharedAndKept(t *testing.T) {
	ctx := context.Background()
	c := newFakeClient(t, nil)
	dirA, dirB := t.TempDir(), t.TempDir()
	if _, err := SelfSignedWebhookCert(ctx, c, dirA, testDNS, ConvertedCRDs); err != nil {
		t.Fatal(err)
	}
	ca := caOf(ctx, t, c)
	if _, err := SelfSignedWebhookCert(ctx, c, dirB, testDNS, ConvertedCRDs); err != nil {
		t.Fatal(err)
	}
	certA, certB := servedCert(ctx, t, c, dirA), servedCert(ctx, t, c, dirB)
	if !certA.Equal(certB) {
		t.Error("two replicas serve different certificates")
	}
	restarted := t.TempDir()
	if _, err := SelfSignedWebhookCert(ctx, c, restarted, testDNS, ConvertedCRDs); err != nil {
		t.Fatal(err)
	}
	if !servedCert(ctx, t, c, restarted).Equal(certA) || string(caOf(ctx, t, c)) != string(ca) {
		t.Error("a restart issued a new certificate or CA")
	}
	if st, err := os.Stat(filepath.Join(dirA, "tls.key")); err != nil {
		t.Errorf("tls.key: %v", err)
	} else if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("tls.key mode %v, want readable by its owner only", st.Mode().Perm())
	}
}

// TestWebhookCertCreateRace plays two replicas that both find no Secret:
// the second one's create fails, and it serves the first one's certificate.
func TestWebhookCertCreateRace(t *testing.T) {
	ctx := context.Background()
	hideOnce := true
	c := newFakeClient(t, &interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*corev1.Secret); ok && key == secretKey && hideOnce {
			if err := c.Get(ctx, key, &corev1.Secret{}); err == nil {
				hideOnce = false
				return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
			}
		}
		return c.Get(ctx, key, obj, opts...)
	}})
	dirA, dirB := t.TempDir(), t.TempDir()
	if _, err := SelfSignedWebhookCert(ctx, c, dirA, testDNS, ConvertedCRDs); err != nil {
		t.Fatal(err)
	}
	if _, err := SelfSignedWebhookCert(ctx, c, dirB, testDNS, ConvertedCRDs); err != nil {
		t.Fatal(err)
	}
	if hideOnce {
		t.Fatal("the second replica never found the Secret missing")
	}
	if !servedCert(ctx, t, c, dirA).Equal(servedCert(ctx, t, c, dirB)) {
		t.Error("the replica that lost the create serves its own certificate")
	}
}

// TestWebhookCertRenewal checks renewal before expiry: the serving
// certificate under the same CA, then a new CA with the old one still trusted.
func TestWebhookCertRenewal(t *testing.T) {
	ctx := context.Background()
	c := newFakeClient(t, nil)
	start := time.Now()
	first, err := ensureCertSecret(ctx, c, secretKey, testDNS, start)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ensureCertSecret(ctx, c, secretKey, testDNS, first.renewAt.Add(-time.Hour)); err != nil || !got.cert.Equal(first.cert) {
		t.Fatalf("before renewal: %v; certificate renewed too early", err)
	}
	renewed, err := ensureCertSecret(ctx, c, secretKey, testDNS, first.renewAt.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if renewed.cert.Equal(first.cert) || !renewed.ca.Equal(first.ca) {
		t.Errorf("serving certificate renewed: %v, CA kept: %v; want both", !renewed.cert.Equal(first.cert), renewed.ca.Equal(first.ca))
	}
	if !renewed.cert.NotAfter.After(first.cert.NotAfter) {
		t.Errorf("renewed certificate ends %v, not after the old one's %v", renewed.cert.NotAfter, first.cert.NotAfter)
	}

	// Shortly before the CA is due, a serving certificate of the old CA is
	// issued; it must still verify once the CA is renewed.
	beforeCA, err := ensureCertSecret(ctx, c, secretKey, testDNS, renewTime(first.ca).Add(-time.Hour))
	if err != nil || !beforeCA.ca.Equal(first.ca) {
		t.Fatalf("before the CA is due: %v; CA renewed too early", err)
	}
	late := renewTime(first.ca).Add(time.Hour)
	newCA, err := ensureCertSecret(ctx, c, secretKey, testDNS, late)
	if err != nil {
		t.Fatal(err)
	}
	if newCA.ca.Equal(first.ca) {
		t.Fatal("CA near its end was not renewed")
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(newCA.caPEM)
	for name, cert := range map[string]*x509.Certificate{"old": beforeCA.cert, "new": newCA.cert} {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: testDNS, Roots: pool, CurrentTime: late}); err != nil {
			t.Errorf("%s serving certificate does not verify against the renewed CA bundle: %v", name, err)
		}
	}
}

// TestWebhookCertUpdateConflict plays a replica that renews while another
// already did: the update conflicts, and it uses the other's certificate.
func TestWebhookCertUpdateConflict(t *testing.T) {
	ctx := context.Background()
	var other *certBundle
	c := newFakeClient(t, &interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
		if other == nil {
			s := &corev1.Secret{}
			if err := c.Get(ctx, secretKey, s); err != nil {
				return err
			}
			old, err := parseCertBundle(s.Data)
			if err != nil {
				return err
			}
			if other, err = newCertBundle(old, testDNS, old.renewAt.Add(time.Hour)); err != nil {
				return err
			}
			s.Data = other.data()
			if err := c.Update(ctx, s); err != nil {
				return err
			}
		}
		return c.Update(ctx, obj, opts...)
	}})
	first, err := ensureCertSecret(ctx, c, secretKey, testDNS, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got, err := ensureCertSecret(ctx, c, secretKey, testDNS, first.renewAt.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if other == nil || !got.cert.Equal(other.cert) {
		t.Error("after a conflicting renewal the replica does not use the other replica's certificate")
	}
}

func TestWebhookCertRefusesBadServiceName(t *testing.T) {
	c := newFakeClient(t, nil)
	if _, err := SelfSignedWebhookCert(context.Background(), c, t.TempDir(), "controllers-webhook", ConvertedCRDs); err == nil {
		t.Error("service name without namespace accepted")
	}
}

// TestWebhookCertWebhookConfigurations: the CA goes into every webhook of
// the ValidatingWebhookConfigurations and MutatingWebhookConfigurations
// the manager serves, as into the CRDs; an install without them is fine.
func TestWebhookCertWebhookConfigurations(t *testing.T) {
	ctx := context.Background()
	c := newFakeClient(t, nil)
	if _, err := SelfSignedWebhookCert(ctx, c, t.TempDir(), testDNS, ConvertedCRDs); err != nil {
		t.Fatalf("without the webhook configurations: %v", err)
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ValidatingWebhooks[0]},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{{Name: "a.example.com"}, {Name: "b.example.com"}},
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: MutatingWebhooks[0]},
		Webhooks:   []admissionregistrationv1.MutatingWebhook{{Name: "c.example.com"}, {Name: "d.example.com"}},
	}
	for _, cfg := range []client.Object{validating, mutating} {
		if err := c.Create(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := SelfSignedWebhookCert(ctx, c, t.TempDir(), testDNS, ConvertedCRDs); err != nil {
		t.Fatal(err)
	}
	bundles := map[string][]byte{}
	for _, cfg := range []client.Object{validating, mutating} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cfg), cfg); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range validating.Webhooks {
		bundles[w.Name] = w.ClientConfig.CABundle
	}
	for _, w := range mutating.Webhooks {
		bundles[w.Name] = w.ClientConfig.CABundle
	}
	ca := caOf(ctx, t, c)
	for name, bundle := range bundles {
		if string(bundle) != string(ca) {
			t.Errorf("webhook %s caBundle %q, want the CA", name, bundle)
		}
	}
}
