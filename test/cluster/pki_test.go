package cluster

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"strings"
	"testing"
)

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s holds no PEM", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWritePKI(t *testing.T) {
	l := layout{dir: t.TempDir()}
	if err := writePKI(l); err != nil {
		t.Fatal(err)
	}
	ca := readCert(t, l.pki("ca.crt"))
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	tests := []struct {
		name    string
		cn      string
		org     string
		usage   x509.ExtKeyUsage
		dnsName string
		ip      string
	}{
		{name: "apiserver", cn: "kube-apiserver", usage: x509.ExtKeyUsageServerAuth, dnsName: "kubernetes.default.svc", ip: APIServerIP},
		{name: "admin", cn: "accelstack-admin", org: "system:masters", usage: x509.ExtKeyUsageClientAuth},
		{name: "kubelet", cn: "system:node:" + NodeName, org: "system:nodes", usage: x509.ExtKeyUsageClientAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := readCert(t, l.pki(tt.name+".crt"))
			if c.Subject.CommonName != tt.cn {
				t.Errorf("CN = %q, want %q", c.Subject.CommonName, tt.cn)
			}
			if tt.org != "" && (len(c.Subject.Organization) != 1 || c.Subject.Organization[0] != tt.org) {
				t.Errorf("O = %v, want %s", c.Subject.Organization, tt.org)
			}
			opts := x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{tt.usage}, DNSName: tt.dnsName}
			if _, err := c.Verify(opts); err != nil {
				t.Errorf("does not verify against the CA for %v: %v", tt.usage, err)
			}
			if tt.ip != "" && !containsIP(c.IPAddresses, tt.ip) {
				t.Errorf("IP SANs %v lack %s", c.IPAddresses, tt.ip)
			}
			info, err := os.Stat(l.pki(tt.name + ".key"))
			if err != nil || info.Mode().Perm() != 0o600 {
				t.Errorf("key file: %v, mode %v; want 0600", err, info.Mode().Perm())
			}
		})
	}
	kc, err := os.ReadFile(l.adminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kc), "server: "+APIServerURL) || !strings.Contains(string(kc), l.pki("admin.crt")) {
		t.Errorf("admin kubeconfig does not point at %s with the admin certificate:\n%s", APIServerURL, kc)
	}
}

func containsIP(ips []net.IP, want string) bool {
	for _, ip := range ips {
		if ip.Equal(net.ParseIP(want)) {
			return true
		}
	}
	return false
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
