package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	// ClientSecretFile and SessionKeyFile hold the client's secret and
	// the key material that seals the session cookies, the same for every
	// replica. Where both are empty they come from the Secret SecretName
	// of the gateway's namespace, which the gateway creates with random
	// values if it is missing.
	ClientSecretFile, SessionKeyFile string
	SecretName                       string
	// SessionTTL is how long a login lasts.
	SessionTTL time.Duration
	// UsersFile is a file of users and their password hashes
	// (directory.AwaitUsersFile) that checks passwords; LDAP is the other
	// choice. Until a good file is there every login is refused.
	UsersFile string
	// LDAP is the directory that checks passwords; its BindPassword is
	// read from LDAPBindPasswordFile.
	LDAP                 directory.LDAPConfig
	LDAPBindPasswordFile string
}

// DefaultLoginOptions returns the login flags' defaults.
func DefaultLoginOptions() LoginOptions {
	return LoginOptions{ClientID: "t9k-client", SecretName: "gateway-login", SessionTTL: 8 * time.Hour}
}

// newLogin builds the login of opts for the gateway at host, or nil
// without an issuer, and the handler of the provider's public endpoints
// where the issuer is at login.ProviderPath on host (else nil). The
// client reads or creates the login Secret in namespace.
func newLogin(ctx context.Context, c client.Client, namespace string, opts LoginOptions, host string, log logr.Logger) (*login.Login, http.Handler, error) {
	if opts.Issuer == "" {
		return nil, nil, nil
	}
	if host == "" {
		return nil, nil, errors.New("the browser login needs the gateway's --host")
	}
	admin, err := url.Parse(opts.AdminURL)
	if err != nil || admin.Host == "" {
		return nil, nil, fmt.Errorf("the identity provider's admin URL %q is not a URL with a host", opts.AdminURL)
	}
	secret, key, err := loginKeys(ctx, c, namespace, opts)
	if err != nil {
		return nil, nil, err
	}
	dir, err := newDirectory(opts, log)
	if err != nil {
		return nil, nil, err
	}
	lg, err := login.New(login.Config{
		Issuer: opts.Issuer, BackChannel: opts.BackChannel, Hydra: &login.Hydra{AdminURL: admin},
		ClientID: opts.ClientID, ClientSecret: secret, ExternalURL: "https://" + host,
		Directory: dir, SessionKey: []byte(key), SessionTTL: opts.SessionTTL, Log: log.WithName("login"),
	})
	if err != nil {
		return nil, nil, err
	}
	issuer, _ := url.Parse(opts.Issuer) // login.New checked it
	if issuer.Host != host || strings.TrimSuffix(issuer.Path, "/") != login.ProviderPath {
		return lg, nil, nil
	}
	if opts.BackChannel == "" {
		return nil, nil, fmt.Errorf("the issuer %s is the gateway's own: it needs the provider's --oidc-back-channel-url", opts.Issuer)
	}
	back, _ := url.Parse(opts.BackChannel) // login.New checked it
	return lg, providerProxy(back, NewTransport(), log.WithName("provider")), nil
}

// loginKeys returns the OAuth client secret and the session key: from
// their files, or from the login Secret where neither file is named.
func loginKeys(ctx context.Context, c client.Client, namespace string, opts LoginOptions) (secret, key string, err error) {
	if opts.ClientSecretFile == "" && opts.SessionKeyFile == "" {
		return loginSecrets(ctx, c, namespace, opts.SecretName)
	}
	if secret, err = readSecretFile("the OAuth client secret", opts.ClientSecretFile); err != nil {
		return "", "", err
	}
	if key, err = readSecretFile("the session key", opts.SessionKeyFile); err != nil {
		return "", "", err
	}
	return secret, key, nil
}

// newDirectory returns the directory of opts: the users file or LDAP,
// exactly one of them.
func newDirectory(opts LoginOptions, log logr.Logger) (directory.Directory, error) {
	switch {
	case opts.UsersFile != "" && opts.LDAP.URL != "":
		return nil, errors.New("the browser login takes one directory: --users-file or --ldap-url, not both")
	case opts.UsersFile != "":
		// The file may come from an optional Secret that an admin creates
		// or fixes later: until then every login is refused, and the
		// gateway runs.
		u, err := directory.AwaitUsersFile(opts.UsersFile)
		if err != nil {
			log.Error(err, "The users file cannot be used yet: every login is refused until it can", "file", opts.UsersFile)
		}
		return u, nil
	case opts.LDAP.URL == "":
		return nil, errors.New("the browser login needs a directory: --users-file or --ldap-url")
	}
	cfg := opts.LDAP
	if opts.LDAPBindPasswordFile != "" {
		var err error
		if cfg.BindPassword, err = readSecretFile("the LDAP bind password", opts.LDAPBindPasswordFile); err != nil {
			return nil, err
		}
	}
	return directory.NewLDAP(cfg)
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
// trying again after retry until it is done, and then checks it again
// every recheck until ctx ends: the provider may start after the gateway,
// and one that keeps its clients in a database of the pod's (the local
// cluster's SQLite) forgets them when it restarts.
func registerClient(ctx context.Context, l *login.Login, retry, recheck time.Duration, log logr.Logger) {
	registered := false
	for {
		interval := retry
		if err := l.EnsureClient(ctx); err != nil {
			log.Error(err, "Registering the OAuth client failed; trying again", "in", retry)
			registered = false
		} else {
			if !registered {
				log.Info("Registered the OAuth client at the identity provider", "client", l.Client().ID)
			}
			registered, interval = true, recheck
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
