package certs

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"testing"
	"time"
)

func TestIssue(t *testing.T) {
	now := time.Now()
	ca, err := NewCA("test-ca", now, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !ca.Cert.IsCA || ca.Cert.Subject.CommonName != "test-ca" || ca.Cert.CheckSignatureFrom(ca.Cert) != nil {
		t.Fatalf("CA %v is not a self-signed CA named test-ca", ca.Cert.Subject)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)

	server, key, err := ca.Issue(Leaf{CommonName: "svc", DNSNames: []string{"svc.ns.svc"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}, Server: true}, now, 48*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if pub, ok := server.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(key.Public()) {
		t.Error("the certificate is not for the returned key")
	}
	if _, err := server.Verify(x509.VerifyOptions{DNSName: "svc.ns.svc", Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("serving certificate: %v", err)
	}
	if err := server.VerifyHostname("10.0.0.1"); err != nil {
		t.Errorf("serving certificate: %v", err)
	}
	if !server.NotAfter.Equal(ca.Cert.NotAfter) {
		t.Errorf("NotAfter = %v, want the CA's %v", server.NotAfter, ca.Cert.NotAfter)
	}

	client, _, err := ca.Issue(Leaf{CommonName: "admin", Organization: []string{"system:masters"}}, now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("a client certificate verifies for server authentication")
	}
	if got := client.Subject.Organization; len(got) != 1 || got[0] != "system:masters" {
		t.Errorf("organization = %v", got)
	}
	if want := now.Add(time.Hour).Truncate(time.Second); !client.NotAfter.Equal(want) {
		t.Errorf("NotAfter = %v, want %v", client.NotAfter, want)
	}
	if server.SerialNumber.Cmp(client.SerialNumber) == 0 {
		t.Error("two certificates share a serial number")
	}

	block, rest := pem.Decode(EncodeCert(client))
	if block == nil || block.Type != "CERTIFICATE" || len(rest) != 0 || string(block.Bytes) != string(client.Raw) {
		t.Error("EncodeCert is not one PEM CERTIFICATE block of the certificate")
	}
}
