package s3volume

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Keys of the CSI secrets the driver reads. A secret holds either the
// S3-env layout (SecretAccessKeyID, SecretSecretAccessKey, SecretEndpoint and
// optionally SecretRegion, SecretInsecure, SecretCABundle) or one key
// SecretS3cfg with an s3cmd configuration; SecretS3cfg wins when both are set.
const (
	SecretAccessKeyID     = "accessKeyID"
	SecretSecretAccessKey = "secretAccessKey"
	SecretEndpoint        = "endpoint"
	SecretRegion          = "region"
	SecretInsecure        = "insecure"
	SecretCABundle        = "caBundle"
	SecretS3cfg           = ".s3cfg"
)

// DefaultRegion is the region used when a secret names none.
const DefaultRegion = "us-east-1"

// Credentials are the S3 endpoint and keys a volume is mounted with.
// String and GoString never show the keys.
type Credentials struct {
	// AccessKeyID and SecretAccessKey are the S3 keys.
	AccessKeyID, SecretAccessKey string
	// Endpoint is the S3 endpoint, scheme http or https plus host[:port].
	Endpoint *url.URL
	// Region is the signing region.
	Region string
	// Insecure skips TLS certificate verification.
	Insecure bool
	// CABundle is PEM certificates to trust besides the system pool.
	CABundle []byte
	// VirtualHost selects virtual-host-style bucket addressing; path style
	// otherwise, which is what most self-hosted S3 servers want.
	VirtualHost bool
}

// String describes the credentials without their keys.
func (c Credentials) String() string {
	ep := ""
	if c.Endpoint != nil {
		ep = c.Endpoint.String()
	}
	return fmt.Sprintf("{endpoint: %s, region: %s, accessKeyID: ***, secretAccessKey: ***}", ep, c.Region)
}

// GoString is String, so %#v does not print the keys either.
func (c Credentials) GoString() string { return c.String() }

// invalidSecret is the error for a missing or malformed key.
func invalidSecret(key, format string, args ...any) error {
	return fmt.Errorf("secret key %s: %s", key, fmt.Sprintf(format, args...))
}

// CredentialsFromSecrets reads credentials from a CSI request's secrets in
// either layout. Every error means the secrets are unusable (the driver
// answers InvalidArgument); errors name the key at fault and never contain
// a secret value.
//
// Every value ends up in a mounter's configuration file or options
// (rclone.conf, s3fs -o), so values that could change the meaning of those
// are refused: control characters anywhere, a region other than lower-case
// letters, digits and '-', an endpoint whose host is not a host name or IP
// address, and an access key ID containing ':' (s3fs's passwd separator).
// The StorageShim controller runs this same check on the Secrets it names,
// and the driver's mounters run HasControl, CheckRegion and CheckHostPort
// again on what they are given.
func CredentialsFromSecrets(secrets map[string]string) (Credentials, error) {
	if cfg, ok := secrets[SecretS3cfg]; ok {
		return credentialsFromS3cfg(cfg)
	}
	var c Credentials
	var err error
	for _, k := range []string{SecretAccessKeyID, SecretSecretAccessKey, SecretEndpoint} {
		if strings.TrimSpace(secrets[k]) == "" {
			if len(secrets) == 0 {
				return c, fmt.Errorf("no S3 credentials: the secret needs %s, %s and %s, or %s", SecretAccessKeyID, SecretSecretAccessKey, SecretEndpoint, SecretS3cfg)
			}
			return c, invalidSecret(k, "missing")
		}
	}
	for _, k := range []string{SecretAccessKeyID, SecretSecretAccessKey, SecretEndpoint, SecretRegion, SecretInsecure} {
		if HasControl(strings.TrimSpace(secrets[k])) {
			return c, invalidSecret(k, "contains a control character")
		}
	}
	c.AccessKeyID = strings.TrimSpace(secrets[SecretAccessKeyID])
	if strings.ContainsRune(c.AccessKeyID, ':') {
		return c, invalidSecret(SecretAccessKeyID, "contains ':'")
	}
	c.SecretAccessKey = strings.TrimSpace(secrets[SecretSecretAccessKey])
	if c.Endpoint, err = parseEndpoint(secrets[SecretEndpoint], true); err != nil {
		return c, invalidSecret(SecretEndpoint, "%v", err)
	}
	c.Region = strings.TrimSpace(secrets[SecretRegion])
	if err := CheckRegion(c.Region); err != nil {
		return c, invalidSecret(SecretRegion, "%v", err)
	}
	if v := strings.TrimSpace(secrets[SecretInsecure]); v != "" {
		if c.Insecure, err = strconv.ParseBool(v); err != nil {
			return c, invalidSecret(SecretInsecure, "not a boolean")
		}
	}
	if v := secrets[SecretCABundle]; strings.TrimSpace(v) != "" {
		if !x509.NewCertPool().AppendCertsFromPEM([]byte(v)) {
			return c, invalidSecret(SecretCABundle, "no PEM certificate found")
		}
		c.CABundle = []byte(v)
	}
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	return c, nil
}

// credentialsFromS3cfg reads the s3cmd layout. host_base without a scheme
// takes it from use_https (s3cmd's default is https). parseS3cfg has
// already refused control characters in every value.
func credentialsFromS3cfg(text string) (Credentials, error) {
	var c Credentials
	values, err := parseS3cfg(text)
	if err != nil {
		return c, invalidSecret(SecretS3cfg, "%v", err)
	}
	for _, k := range []string{"access_key", "secret_key", "host_base"} {
		if values[k] == "" {
			return c, invalidSecret(SecretS3cfg, "%s is missing", k)
		}
	}
	c.AccessKeyID, c.SecretAccessKey = values["access_key"], values["secret_key"]
	if strings.ContainsRune(c.AccessKeyID, ':') {
		return c, invalidSecret(SecretS3cfg, "access_key contains ':'")
	}
	https := true
	if v, ok := values["use_https"]; ok {
		if https, err = parseS3cfgBool(v); err != nil {
			return c, invalidSecret(SecretS3cfg, "use_https: %v", err)
		}
	}
	if v, ok := values["check_ssl_certificate"]; ok {
		check, err := parseS3cfgBool(v)
		if err != nil {
			return c, invalidSecret(SecretS3cfg, "check_ssl_certificate: %v", err)
		}
		c.Insecure = !check
	}
	if c.Endpoint, err = parseEndpoint(values["host_base"], https); err != nil {
		return c, invalidSecret(SecretS3cfg, "host_base: %v", err)
	}
	c.VirtualHost = strings.Contains(values["host_bucket"], "%(bucket)s")
	// s3cmd's legacy location names: US is the default region, EU eu-west-1.
	switch c.Region = values["bucket_location"]; c.Region {
	case "", "US":
		c.Region = DefaultRegion
	case "EU":
		c.Region = "eu-west-1"
	}
	if err := CheckRegion(c.Region); err != nil {
		return c, invalidSecret(SecretS3cfg, "bucket_location: %v", err)
	}
	return c, nil
}

// HasControl reports whether s holds an ASCII control character (below
// 0x20, or DEL), which could end a line or option of a mounter's config.
func HasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// CheckRegion allows an empty region or lower-case letters, digits and
// '-': nothing that could separate s3fs options (',', '=', '\') or rclone
// config lines.
func CheckRegion(r string) error {
	for i := 0; i < len(r); i++ {
		if b := r[i]; !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-') {
			return fmt.Errorf("only lower-case letters, digits and '-' are allowed")
		}
	}
	return nil
}

// parseEndpoint parses "http[s]://host[:port]" or "host[:port]" (then https
// when defaultHTTPS, else http). host must be a DNS name or an IP address
// (IPv6 in brackets); paths, queries, fragments and user info are refused.
// Errors never quote raw.
func parseEndpoint(raw string, defaultHTTPS bool) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if HasControl(raw) {
		return nil, fmt.Errorf("contains a control character")
	}
	if !strings.Contains(raw, "://") {
		scheme := "http"
		if defaultHTTPS {
			scheme = "https"
		}
		raw = scheme + "://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("scheme is not http or https")
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, fmt.Errorf("want http[s]://host[:port]")
	}
	host, err := CheckHostPort(u.Host)
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: u.Scheme, Host: host}, nil
}

// CheckHostPort checks that hostport is a DNS name, an IPv4 address or a
// bracketed IPv6 address, optionally followed by ":port", and returns it
// in canonical form.
func CheckHostPort(hostport string) (string, error) {
	host, port := hostport, ""
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
		host, port = hostport[:i], hostport[i+1:]
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 || strconv.FormatUint(n, 10) != port {
			return "", fmt.Errorf("port is not a number from 1 to 65535")
		}
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		ip := net.ParseIP(host[1 : len(host)-1])
		if ip == nil || ip.To4() != nil {
			return "", fmt.Errorf("host is not an IPv6 address in brackets")
		}
		host = "[" + ip.String() + "]"
	} else if !isDNSName(host) {
		return "", fmt.Errorf("host is not a DNS name or IP address")
	}
	if port != "" {
		return host + ":" + port, nil
	}
	return host, nil
}

// isDNSName reports whether s is dot-separated labels of letters, digits,
// '-' and '_' (not at a label's ends), at most 253 characters. Dotted IPv4
// addresses qualify.
func isDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			b := label[i]
			if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
				return false
			}
		}
	}
	return true
}
