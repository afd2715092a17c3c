// Package t9kconfig reads and writes the T9k config, the file where the
// platform's clients (t9k, t9k-pf) keep their contexts: a server (the
// platform's gateway) and a credential, an API key or the token of a
// password login. A context becomes a Kubernetes client configuration
// that reaches the API server through the gateway as its user.
package t9kconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
)

// EnvVar names the T9k config file instead of DefaultPath.
const EnvVar = "T9K_CONFIG"

// Auth types, as get-contexts prints them.
const (
	AuthAPIKey = "apikey"
	AuthToken  = "token"
)

// KubernetesPrefix is the key of the prefix of the gateway's Kubernetes
// API among a context's prefixes.
const KubernetesPrefix = "kubernetes"

// DefaultPrefixes are the platform servers' paths a new context gets, the
// platform's own and the gateway's Kubernetes API.
var DefaultPrefixes = map[string]string{
	"aistore":          "/t9k/aistore/server",
	"asset-hub":        "/t9k/asset-hub/server",
	"build-console":    "/t9k/build-console/server",
	"cluster-admin":    "/t9k/cluster-admin/server",
	"deploy-console":   "/t9k/deploy-console/server",
	"security-console": "/t9k/security/server",
	"workflow-manager": "/t9k/workflow/server",
	KubernetesPrefix:   gatewayapi.KubernetesPath,
}

// Config is the T9k config file.
type Config struct {
	CurrentContext string    `json:"current-context"`
	Contexts       []Context `json:"contexts"`
}

// Context is a server and a credential.
type Context struct {
	Name          string            `json:"name"`
	Server        string            `json:"server"`
	ImageRegistry string            `json:"image-registry,omitempty"`
	Prefixes      map[string]string `json:"prefixes,omitempty"`
	Auth          Auth              `json:"auth"`
	// CertificateAuthorityData is the PEM of the CAs that sign the
	// server's certificate, when the system's do not.
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
	// InsecureSkipTLSVerify does not check the server's certificate.
	InsecureSkipTLSVerify bool           `json:"insecure-skip-tls-verify,omitempty"`
	Extension             map[string]any `json:"extension,omitempty"`
}

// Auth is a context's credential: one of an API key and a token.
type Auth struct {
	APIKey string `json:"apikey,omitempty"`
	Token  string `json:"token,omitempty"`
}

// Type returns the context's auth type, the API key's when both are set
// (as t9k-pf prefers it), or "".
func (a Auth) Type() string {
	switch {
	case a.APIKey != "":
		return AuthAPIKey
	case a.Token != "":
		return AuthToken
	}
	return ""
}

// Credential returns the bearer credential of the auth, the API key
// first.
func (a Auth) Credential() string {
	if a.APIKey != "" {
		return a.APIKey
	}
	return a.Token
}

// DefaultPath returns $T9K_CONFIG, or ~/.t9k/t9k-config.yaml.
func DefaultPath() string {
	if p := os.Getenv(EnvVar); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".t9k", "t9k-config.yaml")
	}
	return filepath.Join(home, ".t9k", "t9k-config.yaml")
}

// Load reads the file at path; a file that is not there is an empty
// config.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the T9k config: %w", err)
	}
	var c Config
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return nil, fmt.Errorf("the T9k config %s: %w", path, err)
	}
	return &c, nil
}

// Save writes c to path, readable by its owner only (it holds
// credentials), replacing the file whole so that a failed write loses
// nothing.
func (c *Config) Save(path string) error {
	b, err := yaml.Marshal(c)
	if err != nil {
		return fmt.Errorf("encoding the T9k config: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the T9k config's folder: %w", err)
	}
	f, err := os.CreateTemp(dir, ".t9k-config-*")
	if err != nil {
		return fmt.Errorf("writing the T9k config: %w", err)
	}
	defer os.Remove(f.Name()) //nolint:errcheck // gone after the rename
	if _, err := f.Write(b); err != nil {
		f.Close() //nolint:errcheck,gosec // the write failed already
		return fmt.Errorf("writing the T9k config: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the T9k config: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing the T9k config: %w", err)
	}
	return nil
}

// Find returns the context name, or nil.
func (c *Config) Find(name string) *Context {
	for i := range c.Contexts {
		if c.Contexts[i].Name == name {
			return &c.Contexts[i]
		}
	}
	return nil
}

// Set adds ctx, or replaces the context of its name, and makes it the
// current one.
func (c *Config) Set(ctx Context) {
	if old := c.Find(ctx.Name); old != nil {
		*old = ctx
	} else {
		c.Contexts = append(c.Contexts, ctx)
	}
	c.CurrentContext = ctx.Name
}

// Delete removes the context name, even the current one (the current
// context is then none), and reports whether there was one.
func (c *Config) Delete(name string) bool {
	n := len(c.Contexts)
	c.Contexts = slices.DeleteFunc(c.Contexts, func(x Context) bool { return x.Name == name })
	if c.CurrentContext == name {
		c.CurrentContext = ""
	}
	return len(c.Contexts) != n
}

// ValidateName checks a context name: a DNS subdomain name.
func ValidateName(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("the context name %q is not valid: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// ParseServer checks a server address, an https URL with a host and no
// path beyond "/", and returns it without the trailing slash.
func ParseServer(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("the server %q is not an https URL with a host and no path, e.g. https://platform.example.com", s)
	}
	u.Path = ""
	return u, nil
}

// DefaultName returns the default name of a new context: <user>-<domain>
// for a password login, apikey-<hash>-<domain> for an API key, the
// domain being the server's host without its port.
func DefaultName(server *url.URL, user, apiKey string) string {
	domain := server.Hostname()
	if apiKey != "" {
		h := sha256.Sum256([]byte(apiKey))
		return "apikey-" + hex.EncodeToString(h[:4]) + "-" + domain
	}
	return strings.ToLower(user) + "-" + domain
}

// RESTConfig returns the configuration of a Kubernetes client that reaches
// the API server through the context's gateway, with its credential.
func (ctx *Context) RESTConfig() (*rest.Config, error) {
	server, err := ParseServer(ctx.Server)
	if err != nil {
		return nil, fmt.Errorf("context %s: %w", ctx.Name, err)
	}
	if ctx.Auth.Type() == "" {
		return nil, fmt.Errorf("context %s has no credential: log in with t9k config auth %s", ctx.Name, ctx.Server)
	}
	prefix := gatewayapi.KubernetesPath
	if p := ctx.Prefixes[KubernetesPrefix]; p != "" {
		prefix = p
	}
	return &rest.Config{
		Host:        server.String() + prefix,
		BearerToken: ctx.Auth.Credential(),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   ctx.CertificateAuthorityData,
			Insecure: ctx.InsecureSkipTLSVerify,
		},
	}, nil
}
