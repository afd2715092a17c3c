package csi

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

// invalidSecret is the InvalidArgument error for a missing or malformed key.
func invalidSecret(key, format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, "secret key %s: %s", key, fmt.Sprintf(format, args...))
}

// CredentialsFromSecrets reads credentials from a CSI request's secrets in
// either layout. Errors are InvalidArgument and name the key at fault; they
// never contain a secret value.
func CredentialsFromSecrets(secrets map[string]string) (Credentials, error) {
	if cfg, ok := secrets[SecretS3cfg]; ok {
		return credentialsFromS3cfg(cfg)
	}
	var c Credentials
	var err error
	for _, k := range []string{SecretAccessKeyID, SecretSecretAccessKey, SecretEndpoint} {
		if strings.TrimSpace(secrets[k]) == "" {
			if len(secrets) == 0 {
				return c, status.Errorf(codes.InvalidArgument, "no S3 credentials: the secret needs %s, %s and %s, or %s", SecretAccessKeyID, SecretSecretAccessKey, SecretEndpoint, SecretS3cfg)
			}
			return c, invalidSecret(k, "missing")
		}
	}
	c.AccessKeyID = strings.TrimSpace(secrets[SecretAccessKeyID])
	c.SecretAccessKey = strings.TrimSpace(secrets[SecretSecretAccessKey])
	if c.Endpoint, err = parseEndpoint(secrets[SecretEndpoint], true); err != nil {
		return c, invalidSecret(SecretEndpoint, "%v", err)
	}
	c.Region = strings.TrimSpace(secrets[SecretRegion])
	if v := strings.TrimSpace(secrets[SecretInsecure]); v != "" {
		if c.Insecure, err = strconv.ParseBool(v); err != nil {
			return c, invalidSecret(SecretInsecure, "%q is not a boolean", v)
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
// takes it from use_https (s3cmd's default is https).
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
	c.Region = values["bucket_location"]
	if c.Region == "" || c.Region == "US" {
		c.Region = DefaultRegion
	}
	return c, nil
}

// parseEndpoint parses "http[s]://host[:port]" or "host[:port]" (then https
// when defaultHTTPS, else http). Paths, queries and user info are refused.
func parseEndpoint(raw string, defaultHTTPS bool) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
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
		return nil, fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("want http[s]://host[:port]")
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}
