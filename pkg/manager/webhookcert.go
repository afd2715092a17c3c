package manager

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/certs"
)

// ConvertedCRDs are the CRDs served through the conversion webhook.
var ConvertedCRDs = []string{"storageshims.tensorstack.dev"}

// ValidatingWebhooks are the ValidatingWebhookConfigurations (deploy/controllers)
// whose webhooks the manager serves and whose CA it injects.
var ValidatingWebhooks = []string{"accelstack-jobs", "accelstack-queues", "accelstack-elasticjob", "accelstack-workflows", "accelstack-notebooks", "accelstack-interactive", "accelstack-projects"}

// MutatingWebhooks are the MutatingWebhookConfigurations (deploy/controllers)
// whose webhooks the manager serves and whose CA it injects.
var MutatingWebhooks = []string{"accelstack-queue-grants"}

// WebhookCertSecretName is the Secret, in the webhook Service's namespace,
// that holds the webhook's CA and serving certificate, shared by every
// replica and kept across restarts.
const WebhookCertSecretName = "controllers-webhook-cert"

// Keys of the webhook certificate Secret. ca.crt may hold the previous CA
// after the current one, so that certificates it signed still verify while
// replicas move to the new CA.
const (
	secretCACert     = "ca.crt"
	secretCAKey      = "ca.key"
	secretServerCert = corev1.TLSCertKey
	secretServerKey  = corev1.TLSPrivateKeyKey
)

// Lifetimes: a certificate is renewed once less than a third of its life is left.
const (
	caLifetime     = 10 * 365 * 24 * time.Hour
	serverLifetime = 365 * 24 * time.Hour
)

// caCommonName names the webhook's CA.
const caCommonName = "accelstack-webhook-ca"

// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,resourceNames=storageshims.tensorstack.dev,verbs=get;patch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=accelstack-jobs;accelstack-queues;accelstack-elasticjob;accelstack-workflows;accelstack-notebooks;accelstack-interactive;accelstack-projects,verbs=get;patch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=accelstack-queue-grants,verbs=get;patch
// +kubebuilder:rbac:groups="",namespace=accelstack-system,resources=secrets,resourceNames=controllers-webhook-cert,verbs=get;update
// +kubebuilder:rbac:groups="",namespace=accelstack-system,resources=secrets,verbs=create

// SelfSignedWebhookCert makes sure the webhook serves a certificate for the
// Service DNS name serviceDNS (<name>.<namespace>.svc) that the CRDs trust.
// The CA and the serving certificate live in the Secret
// WebhookCertSecretName in the Service's namespace: the first replica to
// start creates it, the others and later restarts reuse it, and whoever finds
// a certificate near its end renews it (an update that carries the version
// read, so two replicas never install different CAs: the loser reads the
// winner's). It writes tls.crt and tls.key into certDir and points the
// conversion webhook of every CRD in crds, the ValidatingWebhooks and the
// MutatingWebhooks at the
// CA. It returns the time the certificates should next be checked.
func SelfSignedWebhookCert(ctx context.Context, c client.Client, certDir, serviceDNS string, crds []string) (time.Time, error) {
	namespace, err := serviceNamespace(serviceDNS)
	if err != nil {
		return time.Time{}, err
	}
	// client-go traces requests through the context's logger, bodies
	// included from -v=8: the Secret holds the CA's key.
	quiet := logr.NewContext(ctx, logr.Discard())
	b, err := ensureCertSecret(quiet, c, client.ObjectKey{Namespace: namespace, Name: WebhookCertSecretName}, serviceDNS, time.Now())
	if err != nil {
		return time.Time{}, err
	}
	if err := writeServingCert(certDir, b); err != nil {
		return time.Time{}, err
	}
	for _, name := range crds {
		if err := injectCA(ctx, c, name, b.caPEM); err != nil {
			return time.Time{}, err
		}
	}
	for kind, names := range map[string][]string{"ValidatingWebhookConfiguration": ValidatingWebhooks, "MutatingWebhookConfiguration": MutatingWebhooks} {
		for _, name := range names {
			if err := injectWebhookCA(ctx, c, kind, name, b.caPEM); err != nil {
				return time.Time{}, err
			}
		}
	}
	return b.renewAt, nil
}

// serviceNamespace returns the namespace of a Service DNS name <name>.<namespace>.svc[.<domain>].
func serviceNamespace(serviceDNS string) (string, error) {
	parts := strings.Split(serviceDNS, ".")
	if len(parts) < 3 || parts[0] == "" || parts[1] == "" || parts[2] != "svc" {
		return "", fmt.Errorf("webhook service name %q is not of the form <name>.<namespace>.svc", serviceDNS)
	}
	return parts[1], nil
}

// ensureCertSecret returns the certificates of the Secret at key, creating
// or renewing them as needed.
func ensureCertSecret(ctx context.Context, c client.Client, key client.ObjectKey, dnsName string, now time.Time) (*certBundle, error) {
	for attempt := 0; attempt < 5; attempt++ {
		secret := &corev1.Secret{}
		err := c.Get(ctx, key, secret)
		switch {
		case apierrors.IsNotFound(err):
			b, err := newCertBundle(nil, dnsName, now)
			if err != nil {
				return nil, err
			}
			secret = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
				Type:       corev1.SecretTypeTLS,
				Data:       b.data(),
			}
			if err := c.Create(ctx, secret); apierrors.IsAlreadyExists(err) {
				continue // another replica created it first: use theirs
			} else if err != nil {
				return nil, fmt.Errorf("creating Secret %s: %w", key, err)
			}
			return b, nil
		case err != nil:
			return nil, fmt.Errorf("getting Secret %s: %w", key, err)
		}
		old, err := parseCertBundle(secret.Data)
		if err == nil && !old.needsRenewal(dnsName, now) {
			return old, nil
		}
		b, err := newCertBundle(old, dnsName, now) // old is nil if unreadable
		if err != nil {
			return nil, err
		}
		secret.Data = b.data()
		if err := c.Update(ctx, secret); apierrors.IsConflict(err) {
			continue // another replica renewed it meanwhile: use theirs
		} else if err != nil {
			return nil, fmt.Errorf("renewing the certificates in Secret %s: %w", key, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("the webhook certificate Secret %s kept changing while it was read", key)
}

// writeServingCert writes tls.crt and tls.key into certDir, each replaced
// atomically so that the webhook server never reads half a file.
func writeServingCert(certDir string, b *certBundle) error {
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return fmt.Errorf("creating webhook cert dir: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"tls.key", b.keyPEM}, {"tls.crt", b.certPEM}} {
		path := filepath.Join(certDir, f.name)
		if cur, err := os.ReadFile(path); err == nil && string(cur) == string(f.data) {
			continue
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, f.data, 0o600); err != nil {
			return fmt.Errorf("writing webhook %s: %w", f.name, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("writing webhook %s: %w", f.name, err)
		}
	}
	return nil
}

// injectCA sets the caBundle of the conversion webhook of CRD name.
func injectCA(ctx context.Context, c client.Client, name string, caPEM []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return fmt.Errorf("getting CRD %s: %w", name, err)
	}
	conv := crd.Spec.Conversion
	if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter {
		return nil // installed without the conversion webhook (e.g. only one version used)
	}
	if conv.Webhook != nil && conv.Webhook.ClientConfig != nil && string(conv.Webhook.ClientConfig.CABundle) == string(caPEM) {
		return nil
	}
	patch := map[string]any{"spec": map[string]any{"conversion": map[string]any{
		"webhook": map[string]any{"clientConfig": map[string]any{"caBundle": caPEM}},
	}}}
	body, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, crd, client.RawPatch(types.MergePatchType, body)); err != nil {
		return fmt.Errorf("injecting the webhook CA into CRD %s: %w", name, err)
	}
	return nil
}

// injectWebhookCA sets the caBundle of every webhook of the webhook
// configuration name of kind (ValidatingWebhookConfiguration or
// MutatingWebhookConfiguration); one not installed is left alone.
func injectWebhookCA(ctx context.Context, c client.Client, kind, name string, caPEM []byte) error {
	cfg := &unstructured.Unstructured{}
	cfg.SetGroupVersionKind(admissionregistrationv1.SchemeGroupVersion.WithKind(kind))
	if err := c.Get(ctx, client.ObjectKey{Name: name}, cfg); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("getting %s %s: %w", kind, name, err)
	}
	patched := cfg.DeepCopy()
	webhooks, _, err := unstructured.NestedSlice(patched.Object, "webhooks")
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", kind, name, err)
	}
	bundle := base64.StdEncoding.EncodeToString(caPEM)
	changed := false
	for _, w := range webhooks {
		m, ok := w.(map[string]any)
		if !ok {
			continue
		}
		if old, _, _ := unstructured.NestedString(m, "clientConfig", "caBundle"); old != bundle {
			if err := unstructured.SetNestedField(m, bundle, "clientConfig", "caBundle"); err != nil {
				return fmt.Errorf("setting the caBundle of %s %s: %w", kind, name, err)
			}
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if err := unstructured.SetNestedSlice(patched.Object, webhooks, "webhooks"); err != nil {
		return fmt.Errorf("setting the webhooks of %s %s: %w", kind, name, err)
	}
	if err := c.Patch(ctx, patched, client.MergeFrom(cfg)); err != nil {
		return fmt.Errorf("injecting the webhook CA into %s %s: %w", kind, name, err)
	}
	return nil
}

// certBundle is a CA and a serving certificate it signed.
type certBundle struct {
	ca      *x509.Certificate
	caKey   *ecdsa.PrivateKey
	caPEM   []byte // the CA, then possibly the previous CA
	cert    *x509.Certificate
	certPEM []byte
	keyPEM  []byte
	renewAt time.Time
}

func (b *certBundle) data() map[string][]byte {
	caKeyDER, _ := x509.MarshalECPrivateKey(b.caKey) // a key we generated always marshals
	return map[string][]byte{
		secretCACert:     b.caPEM,
		secretCAKey:      pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: caKeyDER}),
		secretServerCert: b.certPEM,
		secretServerKey:  b.keyPEM,
	}
}

// renewTime is when a certificate has a third of its life left.
func renewTime(c *x509.Certificate) time.Time {
	return c.NotAfter.Add(-c.NotAfter.Sub(c.NotBefore) / 3)
}

// needsRenewal reports whether the CA or the serving certificate is near its
// end, or the serving certificate is not for dnsName.
func (b *certBundle) needsRenewal(dnsName string, now time.Time) bool {
	return !now.Before(b.renewAt) || b.cert.VerifyHostname(dnsName) != nil
}

// parseCertBundle reads a certBundle from a Secret's data and checks that the
// serving certificate verifies against the CA.
func parseCertBundle(data map[string][]byte) (*certBundle, error) {
	ca, err := parseCert(data[secretCACert])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", secretCACert, err)
	}
	caKey, err := parseKey(data[secretCAKey])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", secretCAKey, err)
	}
	cert, err := parseCert(data[secretServerCert])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", secretServerCert, err)
	}
	if _, err := parseKey(data[secretServerKey]); err != nil {
		return nil, fmt.Errorf("%s: %w", secretServerKey, err)
	}
	if err := cert.CheckSignatureFrom(ca); err != nil {
		return nil, fmt.Errorf("%s is not signed by %s: %w", secretServerCert, secretCACert, err)
	}
	renewAt := renewTime(cert)
	if r := renewTime(ca); r.Before(renewAt) {
		renewAt = r
	}
	return &certBundle{
		ca: ca, caKey: caKey, caPEM: data[secretCACert],
		cert: cert, certPEM: data[secretServerCert], keyPEM: data[secretServerKey],
		renewAt: renewAt,
	}, nil
}

// parseCert returns the first certificate of a PEM block list.
func parseCert(p []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(p)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

func parseKey(p []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(p)
	if block == nil {
		return nil, errors.New("no PEM key")
	}
	return x509.ParseECPrivateKey(block.Bytes)
}

// newCertBundle issues a serving certificate for dnsName. It keeps the CA of
// old while that has more than a third of its life left; otherwise it makes
// a new CA and keeps the old one in the bundle until the old one expires.
func newCertBundle(old *certBundle, dnsName string, now time.Time) (*certBundle, error) {
	b := &certBundle{}
	if old != nil && now.Before(renewTime(old.ca)) {
		b.ca, b.caKey, b.caPEM = old.ca, old.caKey, old.caPEM
	} else {
		ca, err := certs.NewCA(caCommonName, now, caLifetime)
		if err != nil {
			return nil, err
		}
		b.ca, b.caKey = ca.Cert, ca.Key
		b.caPEM = certs.EncodeCert(ca.Cert)
		if old != nil && now.Before(old.ca.NotAfter) {
			b.caPEM = append(b.caPEM, certs.EncodeCert(old.ca)...)
		}
	}
	ca := &certs.CA{Cert: b.ca, Key: b.caKey}
	cert, key, err := ca.Issue(certs.Leaf{
		CommonName: dnsName,
		DNSNames:   []string{dnsName, strings.TrimSuffix(dnsName, ".svc")},
		Server:     true,
	}, now, serverLifetime)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	b.cert = cert
	b.certPEM = certs.EncodeCert(cert)
	b.keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	b.renewAt = renewTime(b.cert)
	if r := renewTime(b.ca); r.Before(b.renewAt) {
		b.renewAt = r
	}
	return b, nil
}

// webhookCertRenewer renews the webhook certificate while the manager runs,
// in every replica (the webhook server reloads the files when they change).
type webhookCertRenewer struct {
	client              client.Client
	certDir, serviceDNS string
	next                time.Time
}

// NeedLeaderElection is false: every replica serves the webhook.
func (r *webhookCertRenewer) NeedLeaderElection() bool { return false }

// Start checks the certificate when it is due (at least daily) until ctx ends.
func (r *webhookCertRenewer) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("webhook-cert")
	for {
		wait := min(max(time.Until(r.next), time.Minute), 24*time.Hour)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		next, err := SelfSignedWebhookCert(ctx, r.client, r.certDir, r.serviceDNS, ConvertedCRDs)
		if err != nil {
			log.Error(err, "Renewing the webhook certificate")
			r.next = time.Now().Add(time.Minute)
			continue
		}
		r.next = next
	}
}
