package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/accelstack/accelstack/pkg/directory"
	"github.com/accelstack/accelstack/pkg/gateway/login"
)

// LoginOptions configure the browser login; without an Issuer there is
// none, and only bearer credentials are accepted.
type LoginOptions struct {
	// Issuer is the identity provider's issuer URL, as browsers reach it.
	Issuer string
	// BackChannel is the provider's public URL as the gateway reaches it;
	// empty is Issuer.
	BackChannel string
	// AdminURL is the provider's admin API (Ory Hydra's).
	AdminURL string
	// ClientID names the gateway's OAuth 2.0 client at the provider.
	ClientID string
	// ClientSecretFile holds the client's secret.
	ClientSecretFile string
	// SessionKeyFile holds the key material that seals the session
	// cookies, the same for every replica.
	SessionKeyFile string
	// SessionTTL is how long a login lasts.
	SessionTTL time.Duration
	// LDAP is the directory that checks passwords; its BindPassword is
	// read from LDAPBindPasswordFile.
	LDAP                 directory.LDAPConfig
	LDAPBindPasswordFile string
}

// DefaultLoginOptions returns the login flags' defaults.
func DefaultLoginOptions() LoginOptions {
	return LoginOptions{ClientID: "t9k-client", SessionTTL: 8 * time.Hour}
}

// newLogin builds the login of opts for the gateway at host, or nil
// without an issuer.
func newLogin(opts LoginOptions, host string, log logr.Logger) (*login.Login, error) {
	if opts.Issuer == "" {
		return nil, nil
	}
	if host == "" {
		return nil, errors.New("the browser login needs the gateway's --host")
	}
	admin, err := url.Parse(opts.AdminURL)
	if err != nil || admin.Host == "" {
		return nil, fmt.Errorf("the identity provider's admin URL %q is not a URL with a host", opts.AdminURL)
	}
	secret, err := readSecretFile("the OAuth client secret", opts.ClientSecretFile)
	if err != nil {
		return nil, err
	}
	key, err := readSecretFile("the session key", opts.SessionKeyFile)
	if err != nil {
		return nil, err
	}
	ldapCfg := opts.LDAP
	if opts.LDAPBindPasswordFile != "" {
		if ldapCfg.BindPassword, err = readSecretFile("the LDAP bind password", opts.LDAPBindPasswordFile); err != nil {
			return nil, err
		}
	}
	dir, err := directory.NewLDAP(ldapCfg)
	if err != nil {
		return nil, err
	}
	return login.New(login.Config{
		Issuer: opts.Issuer, BackChannel: opts.BackChannel, Hydra: &login.Hydra{AdminURL: admin},
		ClientID: opts.ClientID, ClientSecret: secret, ExternalURL: "https://" + host,
		Directory: dir, SessionKey: []byte(key), SessionTTL: opts.SessionTTL, Log: log.WithName("login"),
	})
}

// readSecretFile reads a secret from a file, without its trailing newline.
func readSecretFile(what, path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("the browser login needs a file with %s", what)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", what, err)
	}
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return "", fmt.Errorf("the file of %s, %s, is empty", what, path)
	}
	return s, nil
}

// registerClient registers the gateway's OAuth client at the provider,
// trying again every interval until it is done or ctx ends: the provider
// may start after the gateway.
func registerClient(ctx context.Context, l *login.Login, interval time.Duration, log logr.Logger) {
	for {
		err := l.EnsureClient(ctx)
		if err == nil {
			log.Info("Registered the OAuth client at the identity provider", "client", l.Client().ID)
			return
		}
		log.Error(err, "Registering the OAuth client failed; trying again", "in", interval)
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
