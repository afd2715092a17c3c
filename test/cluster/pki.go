package cluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/accelstack/accelstack/pkg/certs"
)

// certSpec is one certificate the cluster needs.
type certSpec struct {
	name   string // file stem under pki/
	cn     string
	org    []string
	server bool // serving certificate (else client)
	ips    []string
	dns    []string
}

// clusterCerts are the certificates Up issues. kube-controller-manager,
// kube-scheduler and the API server's kubelet client use the admin
// identity: one node, one administrator.
func clusterCerts() []certSpec {
	return []certSpec{
		{name: "apiserver", cn: "kube-apiserver", server: true,
			ips: []string{APIServerIP, "127.0.0.1"},
			dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}},
		{name: "admin", cn: "accelstack-admin", org: []string{"system:masters"}},
		{name: "kubelet", cn: "system:node:" + NodeName, org: []string{"system:nodes"}},
		// The gateway's serving certificate, which the API server trusts
		// as the identity provider's (Hydra behind the gateway).
		{name: "gateway", cn: "accelstack-gateway", server: true, ips: []string{GatewayIP}},
	}
}

// writePKI issues a CA, the certificates, the service-account key pair and
// the kubeconfigs under l. Keys are ECDSA P-256 and files are 0600.
func writePKI(l layout) error {
	if err := os.MkdirAll(l.pki(""), 0o700); err != nil {
		return err
	}
	now := time.Now()
	const lifetime = 365 * 24 * time.Hour
	ca, err := certs.NewCA("accelstack-local-ca", now, lifetime)
	if err != nil {
		return fmt.Errorf("issuing the CA: %w", err)
	}
	if err := writeCert(l.pki("ca"), ca.Cert.Raw, ca.Key); err != nil {
		return err
	}
	for _, s := range clusterCerts() {
		leaf := certs.Leaf{CommonName: s.cn, Organization: s.org, DNSNames: s.dns, Server: s.server}
		for _, ip := range s.ips {
			leaf.IPAddresses = append(leaf.IPAddresses, net.ParseIP(ip))
		}
		cert, key, err := ca.Issue(leaf, now, lifetime)
		if err != nil {
			return fmt.Errorf("issuing %s: %w", s.name, err)
		}
		if err := writeCert(l.pki(s.name), cert.Raw, key); err != nil {
			return err
		}
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	if err := writeKey(l.pki("sa.key"), saKey); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return err
	}
	if err := writePEM(l.pki("sa.pub"), "PUBLIC KEY", pub); err != nil {
		return err
	}
	if err := writeKubeconfig(l.adminKubeconfig(), l, "admin"); err != nil {
		return err
	}
	return writeKubeconfig(l.kubeletKubeconfig(), l, "kubelet")
}

func writeCert(stem string, der []byte, key crypto.Signer) error {
	if err := writePEM(stem+".crt", "CERTIFICATE", der); err != nil {
		return err
	}
	return writeKey(stem+".key", key)
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// writeKubeconfig writes a kubeconfig for the identity whose certificate
// is pki/<user>.crt.
func writeKubeconfig(path string, l layout, user string) error {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: accelstack
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: accelstack
  context:
    cluster: accelstack
    user: %s
current-context: accelstack
`, APIServerURL, l.pki("ca.crt"), user, l.pki(user+".crt"), l.pki(user+".key"), user)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(cfg), 0o600)
}
