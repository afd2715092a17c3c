package directory

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// validConfig is the smallest valid configuration.
func validConfig() LDAPConfig {
	return LDAPConfig{URL: "ldap://127.0.0.1:389", UserBaseDN: "ou=people,dc=example,dc=org"}
}

func TestNewLDAPDefaults(t *testing.T) {
	l, err := NewLDAP(validConfig())
	if err != nil {
		t.Fatal(err)
	}
	c := l.cfg
	if c.UserFilter != "(uid=%s)" || c.NameAttribute != "uid" || c.GroupFilter != "(member=%s)" ||
		c.GroupNameAttribute != "cn" || c.Timeout != 10*time.Second {
		t.Errorf("defaults not set: %+v", c)
	}
	if l.addr != "127.0.0.1:389" || l.ldaps || l.tls != nil {
		t.Errorf("addr %q, ldaps %v, tls %v", l.addr, l.ldaps, l.tls)
	}
}

func TestNewLDAPPorts(t *testing.T) {
	for url, want := range map[string]string{
		"ldap://dir.example.org":       "dir.example.org:389",
		"ldaps://dir.example.org":      "dir.example.org:636",
		"ldaps://dir.example.org:1636": "dir.example.org:1636",
		"ldap://[::1]:1389/":           "[::1]:1389",
	} {
		c := validConfig()
		c.URL = url
		l, err := NewLDAP(c)
		if err != nil {
			t.Errorf("%s: %v", url, err)
			continue
		}
		if l.addr != want {
			t.Errorf("%s: addr %q, want %q", url, l.addr, want)
		}
		if l.ldaps != strings.HasPrefix(url, "ldaps:") || l.ldaps && l.tls.ServerName != "dir.example.org" {
			t.Errorf("%s: ldaps %v, tls %+v", url, l.ldaps, l.tls)
		}
	}
}

func TestNewLDAPNamesTheBadField(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*LDAPConfig)
	}{
		{"URL", func(c *LDAPConfig) { c.URL = "" }},
		{"URL", func(c *LDAPConfig) { c.URL = "http://dir.example.org" }},
		{"URL", func(c *LDAPConfig) { c.URL = "ldap:///" }},
		{"URL", func(c *LDAPConfig) { c.URL = "ldap://dir.example.org/dc=example,dc=org??sub" }},
		{"URL", func(c *LDAPConfig) { c.URL = "ldap://admin:secret@dir.example.org" }},
		{"StartTLS", func(c *LDAPConfig) { c.URL, c.StartTLS = "ldaps://dir.example.org", true }},
		{"CAFile", func(c *LDAPConfig) { c.CAFile = "/etc/ssl/ca.pem" }},
		{"CAFile", func(c *LDAPConfig) { c.StartTLS, c.CAFile = true, filepath.Join(t.TempDir(), "none.pem") }},
		{"CAFile", func(c *LDAPConfig) { c.StartTLS, c.CAFile = true, writeFile(t, "not a certificate") }},
		{"BindPassword", func(c *LDAPConfig) { c.BindDN = "cn=reader,dc=example,dc=org" }},
		{"BindPassword", func(c *LDAPConfig) { c.BindPassword = "secret" }},
		{"BindDN", func(c *LDAPConfig) { c.BindDN, c.BindPassword = "reader", "secret" }},
		{"UserBaseDN", func(c *LDAPConfig) { c.UserBaseDN = "" }},
		{"UserBaseDN", func(c *LDAPConfig) { c.UserBaseDN = "people" }},
		{"UserFilter", func(c *LDAPConfig) { c.UserFilter = "(uid=alice)" }},
		{"UserFilter", func(c *LDAPConfig) { c.UserFilter = "(|(uid=%s)(mail=%s))" }},
		{"UserFilter", func(c *LDAPConfig) { c.UserFilter = "uid=%s" }},
		{"NameAttribute", func(c *LDAPConfig) { c.NameAttribute = "uid)(cn" }},
		{"GroupBaseDN", func(c *LDAPConfig) { c.GroupBaseDN = "groups" }},
		{"GroupFilter", func(c *LDAPConfig) { c.GroupFilter = "(member=*)" }},
		{"GroupFilter", func(c *LDAPConfig) { c.GroupFilter = "(&(member=%s)" }},
		{"GroupNameAttribute", func(c *LDAPConfig) { c.GroupNameAttribute = "c n" }},
		{"Timeout", func(c *LDAPConfig) { c.Timeout = -time.Second }},
	} {
		c := validConfig()
		tc.edit(&c)
		_, err := NewLDAP(c)
		if err == nil || !strings.Contains(err.Error(), "LDAPConfig."+tc.field+":") {
			t.Errorf("%+v: error %v, want one naming LDAPConfig.%s", c, err, tc.field)
		}
	}
}

func TestNewLDAPReadsCAFile(t *testing.T) {
	c := validConfig()
	c.StartTLS, c.CAFile = true, writeFile(t, selfSignedPEM(t))
	l, err := NewLDAP(c)
	if err != nil {
		t.Fatal(err)
	}
	if l.tls == nil || l.tls.RootCAs == nil || l.tls.ServerName != "127.0.0.1" || l.tls.InsecureSkipVerify {
		t.Errorf("TLS configuration %+v", l.tls)
	}
}

// writeFile writes content to a file of its own and returns its path.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// selfSignedPEM returns a self-signed CA certificate in PEM.
func selfSignedPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
