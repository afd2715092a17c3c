package directory

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// Defaults of LDAPConfig's optional fields.
const (
	DefaultUserFilter         = "(uid=%s)"
	DefaultNameAttribute      = "uid"
	DefaultGroupFilter        = "(member=%s)"
	DefaultGroupNameAttribute = "cn"
	DefaultTimeout            = 10 * time.Second
)

// LDAPConfig is how to reach an LDAP directory and find users and groups
// in it. There is no option to skip verifying the server's certificate.
type LDAPConfig struct {
	// URL is the server, ldap://host[:port] or ldaps://host[:port]. With
	// ldap:// and no StartTLS, passwords cross the network in clear text.
	URL string
	// StartTLS upgrades an ldap:// connection to TLS before anything is sent.
	StartTLS bool
	// CAFile is a PEM file of the CAs that sign the server's certificate;
	// empty uses the system's roots. Only with ldaps:// or StartTLS.
	CAFile string
	// BindDN and BindPassword are the service account that searches for
	// users and groups; both empty search anonymously.
	BindDN, BindPassword string
	// UserBaseDN is where users are searched for, in its whole subtree.
	UserBaseDN string
	// UserFilter finds a user's entry, its one %s replaced by the escaped
	// user name; default DefaultUserFilter.
	UserFilter string
	// NameAttribute is the attribute of the user's entry that becomes
	// Identity.Name, so that the directory's own spelling is used; the
	// entry must hold exactly one value of it. Default DefaultNameAttribute.
	NameAttribute string
	// GroupBaseDN is where groups are searched for, in its whole subtree;
	// empty reads no groups.
	GroupBaseDN string
	// GroupFilter finds the user's groups, its one %s replaced by the
	// escaped DN of the user's entry; default DefaultGroupFilter.
	GroupFilter string
	// GroupNameAttribute holds a group's name, every value of it taken;
	// default DefaultGroupNameAttribute.
	GroupNameAttribute string
	// Timeout bounds one Authenticate call, connections included; default
	// DefaultTimeout.
	Timeout time.Duration
}

// attributeRE matches an attribute description: a name or an OID.
var attributeRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]*|[0-9]+(\.[0-9]+)*)$`)

// fieldError names the field of LDAPConfig that is wrong.
func fieldError(field, format string, args ...any) error {
	return fmt.Errorf("LDAPConfig.%s: %s", field, fmt.Sprintf(format, args...))
}

// withDefaults returns c with its empty optional fields set.
func (c LDAPConfig) withDefaults() LDAPConfig {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.UserFilter, DefaultUserFilter)
	def(&c.NameAttribute, DefaultNameAttribute)
	def(&c.GroupFilter, DefaultGroupFilter)
	def(&c.GroupNameAttribute, DefaultGroupNameAttribute)
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// parseURL checks c.URL and returns the server's host:port and whether
// the connection is TLS from the start.
func (c LDAPConfig) parseURL() (addr string, ldaps bool, err error) {
	u, err := url.Parse(c.URL)
	if err != nil {
		return "", false, fieldError("URL", "%v", err)
	}
	port := "389"
	switch u.Scheme {
	case "ldap":
	case "ldaps":
		port, ldaps = "636", true
	default:
		return "", false, fieldError("URL", "%q is not ldap:// or ldaps://", c.URL)
	}
	if u.Hostname() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false, fieldError("URL", "%q is not scheme://host[:port]", c.URL)
	}
	if u.Port() != "" {
		port = u.Port()
	}
	return net.JoinHostPort(u.Hostname(), port), ldaps, nil
}

// tlsConfig returns the TLS configuration for host: the CAs of c.CAFile,
// or the system's roots.
func (c LDAPConfig) tlsConfig(host string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
	if c.CAFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fieldError("CAFile", "%v", err)
	}
	cfg.RootCAs = x509.NewCertPool()
	if !cfg.RootCAs.AppendCertsFromPEM(pem) {
		return nil, fieldError("CAFile", "%s holds no PEM certificate", c.CAFile)
	}
	return cfg, nil
}

// checkDN checks that field holds a DN.
func checkDN(field, dn string) error {
	if _, err := ldap.ParseDN(dn); err != nil {
		return fieldError(field, "%q is not a DN: %v", dn, err)
	}
	return nil
}

// checkFilter checks that filter has exactly one %s and is a valid filter
// with it replaced.
func checkFilter(field, filter string) error {
	if n := strings.Count(filter, "%s"); n != 1 {
		return fieldError(field, "%q must hold exactly one %%s, not %d", filter, n)
	}
	if _, err := ldap.CompileFilter(strings.Replace(filter, "%s", "x", 1)); err != nil {
		return fieldError(field, "%q: %v", filter, err)
	}
	return nil
}

// checkAttribute checks that field holds an attribute name.
func checkAttribute(field, attr string) error {
	if !attributeRE.MatchString(attr) {
		return fieldError(field, "%q is not an attribute name", attr)
	}
	return nil
}

// check validates c, defaults set; it does not read CAFile.
func (c LDAPConfig) check() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	_, ldaps, err := c.parseURL()
	add(err)
	if err == nil && ldaps && c.StartTLS {
		add(fieldError("StartTLS", "set with an ldaps:// URL, which is TLS already"))
	}
	if err == nil && !ldaps && !c.StartTLS && c.CAFile != "" {
		add(fieldError("CAFile", "set, but the URL is ldap:// without StartTLS"))
	}
	switch {
	case c.BindDN == "" && c.BindPassword != "":
		add(fieldError("BindPassword", "set without BindDN"))
	case c.BindDN != "" && c.BindPassword == "":
		// An empty password would make the bind an unauthenticated one.
		add(fieldError("BindPassword", "empty, with BindDN %q", c.BindDN))
	case c.BindDN != "":
		add(checkDN("BindDN", c.BindDN))
	}
	if c.UserBaseDN == "" {
		add(fieldError("UserBaseDN", "empty"))
	} else {
		add(checkDN("UserBaseDN", c.UserBaseDN))
	}
	add(checkFilter("UserFilter", c.UserFilter))
	add(checkAttribute("NameAttribute", c.NameAttribute))
	if c.GroupBaseDN != "" {
		add(checkDN("GroupBaseDN", c.GroupBaseDN))
	}
	add(checkFilter("GroupFilter", c.GroupFilter))
	add(checkAttribute("GroupNameAttribute", c.GroupNameAttribute))
	if c.Timeout < 0 {
		add(fieldError("Timeout", "negative (%s)", c.Timeout))
	}
	return errors.Join(errs...)
}
