// Command gateway is the platform's way in: one HTTPS entry in front of
// every web workload (Notebooks, TensorBoards, Explorers, EventListeners
// and serving hosts), which authenticates each request (a Kubernetes token,
// an API key, or a browser login through the identity provider, whose
// login app it also is), authorizes it against the workload's project (a
// SubjectAccessReview) and proxies it to the workload with the workload's
// own access token. It also serves the users' API keys. See package
// gateway.
package main

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/cli/kubeconfig"
	"github.com/accelstack/accelstack/pkg/gateway"
)

func main() {
	fs := cli.NewFlagSet("gateway", "the authenticated entry to the platform's web workloads")
	kubeconfigPath := fs.String("kubeconfig", "", "Path to a kubeconfig; empty means in-cluster or $KUBECONFIG.")
	opts := gateway.DefaultOptions()
	fs.StringVar(&opts.Address, "address", opts.Address, "Address the gateway serves HTTPS at.")
	fs.StringVar(&opts.MetricsAddress, "metrics-address", opts.MetricsAddress, "Address /metrics is served at over HTTP; empty serves none.")
	fs.StringVar(&opts.TLSCertFile, "tls-cert-file", "", "PEM certificate the gateway serves; empty issues a self-signed one at start.")
	fs.StringVar(&opts.TLSKeyFile, "tls-key-file", "", "PEM key of --tls-cert-file.")
	fs.StringVar(&opts.Host, "host", "", "The gateway's host name, where workload paths are served; empty serves them on any host that is not a serving host.")
	fs.StringVar(&opts.ServingDomain, "serving-domain", "", "Domain of the serving hosts <service>.<namespace>.<domain>; empty serves none.")
	fs.StringVar(&opts.Namespace, "namespace", opts.Namespace, "Namespace of the API keys' Secrets.")
	fs.Func("audiences", "Comma-separated audiences a Kubernetes token must be for; empty means the API server's.", func(v string) error {
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				opts.Audiences = append(opts.Audiences, a)
			}
		}
		return nil
	})
	fs.DurationVar(&opts.CacheTTL, "cache-ttl", opts.CacheTTL, "How long an authentication, authorization or upstream is remembered: a revoked right or key works at most this long.")
	fs.IntVar(&opts.CacheSize, "cache-size", opts.CacheSize, "Entries each cache holds.")
	fs.IntVar(&opts.MaxHeaderBytes, "max-header-bytes", opts.MaxHeaderBytes, "Largest request head; a larger one is answered 431.")
	fs.StringVar(&opts.ConsoleURL, "console-url", "", "The console server (http://host:port) the consoles' paths go to once the caller has logged in; empty serves no console.")
	lo := &opts.Login
	fs.StringVar(&lo.Issuer, "oidc-issuer", "", "Issuer URL of the identity provider (Ory Hydra) as browsers reach it; empty serves no browser login.")
	fs.StringVar(&lo.BackChannel, "oidc-back-channel-url", "", "The identity provider's public URL as the gateway reaches it, for its token endpoint and keys; empty is --oidc-issuer.")
	fs.StringVar(&lo.AdminURL, "oidc-admin-url", "", "The identity provider's admin API, whose login, consent and logout requests the gateway answers.")
	fs.StringVar(&lo.ClientID, "oidc-client-id", lo.ClientID, "The gateway's OAuth 2.0 client ID, registered at the provider at start.")
	fs.StringVar(&lo.ClientSecretFile, "oidc-client-secret-file", "", "File with the OAuth 2.0 client's secret; with --session-key-file, instead of --login-secret.")
	fs.StringVar(&lo.SessionKeyFile, "session-key-file", "", "File with at least 32 bytes of secret material sealing the session cookies, the same for every replica.")
	fs.StringVar(&lo.SecretName, "login-secret", lo.SecretName, "Secret of --namespace holding the client secret, the session key and Hydra's system secret, created with random values if missing; used unless the two files are named.")
	fs.StringVar(&lo.UsersFile, "users-file", "", "The directory that checks passwords: a YAML file of users, their bcrypt password hashes and groups (docs/access.md); or --ldap-url.")
	fs.DurationVar(&lo.SessionTTL, "session-ttl", lo.SessionTTL, "How long a browser login lasts.")
	fs.StringVar(&lo.LDAP.URL, "ldap-url", "", "The directory that checks passwords: ldap://host:port or ldaps://host:port.")
	fs.BoolVar(&lo.LDAP.StartTLS, "ldap-start-tls", false, "Upgrade an ldap:// connection with StartTLS.")
	fs.StringVar(&lo.LDAP.CAFile, "ldap-ca-file", "", "PEM CA bundle the directory's certificate is checked against; empty uses the system's.")
	fs.StringVar(&lo.LDAP.BindDN, "ldap-bind-dn", "", "DN the gateway searches users as; empty searches anonymously.")
	fs.StringVar(&lo.LDAPBindPasswordFile, "ldap-bind-password-file", "", "File with --ldap-bind-dn's password.")
	fs.StringVar(&lo.LDAP.UserBaseDN, "ldap-user-base-dn", "", "Where users are searched, e.g. ou=people,dc=example,dc=org.")
	fs.StringVar(&lo.LDAP.UserFilter, "ldap-user-filter", "", "Filter finding a user, with one %s for the escaped user name; empty is (uid=%s).")
	fs.StringVar(&lo.LDAP.NameAttribute, "ldap-name-attribute", "", "Attribute whose value is the user's name on the platform; empty is uid.")
	fs.StringVar(&lo.LDAP.GroupBaseDN, "ldap-group-base-dn", "", "Where groups are searched; empty reads no groups.")
	fs.StringVar(&lo.LDAP.GroupFilter, "ldap-group-filter", "", "Filter finding a user's groups, with one %s for the escaped user DN; empty is (member=%s).")
	fs.StringVar(&lo.LDAP.GroupNameAttribute, "ldap-group-name-attribute", "", "Attribute whose value is a group's name; empty is cn.")
	fs.Check(func() error {
		if (opts.TLSCertFile == "") != (opts.TLSKeyFile == "") {
			return fmt.Errorf("--tls-cert-file and --tls-key-file go together")
		}
		if err := cli.Hosts(map[string]string{"host": opts.Host, "serving-domain": opts.ServingDomain}); err != nil {
			return err
		}
		if opts.CacheTTL < 0 || opts.CacheSize < 1 || opts.MaxHeaderBytes < 1024 {
			return fmt.Errorf("--cache-ttl must not be negative, --cache-size must be positive and --max-header-bytes at least 1024")
		}
		return nil
	})
	cli.Main(fs, func(ctx context.Context) error {
		cfg, err := kubeconfig.RESTConfig(*kubeconfigPath)
		if err != nil {
			return err
		}
		return gateway.Run(ctx, cfg, opts, klog.NewKlogr())
	})
}
