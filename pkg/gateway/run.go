package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/certs"
	"github.com/accelstack/accelstack/pkg/gateway/apikey"
)

// Options configure Run.
type Options struct {
	// Address is where the gateway serves HTTPS.
	Address string
	// MetricsAddress serves /metrics over HTTP; empty serves none.
	MetricsAddress string
	// TLSCertFile and TLSKeyFile are the serving certificate; empty
	// issues a self-signed one for Host and *.ServingDomain at start.
	TLSCertFile, TLSKeyFile string
	// Host and ServingDomain are the Router's.
	Host, ServingDomain string
	// Namespace holds the API keys.
	Namespace string
	// Audiences are those a Kubernetes token must be for; none is the API
	// server's.
	Audiences []string
	// CacheTTL is how long a decision or lookup is kept; a revoked right
	// or key works at most this long.
	CacheTTL time.Duration
	// CacheSize bounds each cache.
	CacheSize int
	// MaxHeaderBytes bounds a request's head; a larger one is answered 431.
	MaxHeaderBytes int
	// Login configures the browser login.
	Login LoginOptions
	// ConsoleURL is the console server's URL (http://host:port); empty
	// serves no console.
	ConsoleURL string
}

// DefaultOptions returns the defaults of the flags.
func DefaultOptions() Options {
	return Options{Address: ":8443", MetricsAddress: ":9090", Namespace: "accelstack-system", CacheTTL: 10 * time.Second, CacheSize: 10000, MaxHeaderBytes: 64 << 10, Login: DefaultLoginOptions()}
}

// New returns a gateway with clients of cfg; ctx bounds reading, or
// creating, the login Secret.
func New(ctx context.Context, cfg *rest.Config, opts Options, log logr.Logger, reg prometheus.Registerer) (*Gateway, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building the scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("building the API client: %w", err)
	}
	keys := apikey.NewStore(c, opts.Namespace, opts.CacheTTL, time.Minute)
	var authn Authenticator = NewBearerAuthenticator(keys, c, opts.Audiences, opts.CacheTTL, opts.CacheSize)
	lg, provider, err := newLogin(ctx, c, opts.Namespace, opts.Login, opts.Host, log)
	if err != nil {
		return nil, err
	}
	if lg != nil {
		authn = SessionAuthenticator{Login: lg, Next: authn}
	}
	api, err := newAPIProxy(cfg, authn, c, opts.CacheTTL, log)
	if err != nil {
		return nil, err
	}
	var console *url.URL
	if opts.ConsoleURL != "" {
		if console, err = parseConsoleURL(opts.ConsoleURL); err != nil {
			return nil, err
		}
	}
	return &Gateway{
		Console:       console,
		API:           api,
		Router:        Router{Host: opts.Host, ServingDomain: opts.ServingDomain},
		Authenticator: authn,
		Login:         lg,
		Provider:      provider,
		Authorizer:    NewSARAuthorizer(c, opts.CacheTTL, opts.CacheSize),
		Resolver:      NewResolver(c, opts.CacheTTL, opts.CacheSize),
		Keys:          keys,
		Client:        c,
		Transport:     NewTransport(),
		Log:           log,
		Metrics:       NewMetrics(reg),
	}, nil
}

// parseConsoleURL checks the console server's URL: http or https, a host,
// no path, query or credentials.
func parseConsoleURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil || u.Fragment != "" {
		return nil, fmt.Errorf("console URL %q: want http://host:port", s)
	}
	u.Path = ""
	return u, nil
}

// NewTransport returns the transport to the workloads: bounded dials and
// idle connections, no overall timeout (kernels and terminals stay open),
// HTTP/1.1 so that WebSocket upgrades go through.
func NewTransport() *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// newAPIProxy returns the proxy to the API server of cfg: requests that
// impersonate carry cfg's credential (the gateway's ServiceAccount's),
// those with the caller's token no credential of the gateway's at all (a
// client certificate would otherwise win over the token). Both go over
// HTTP/1.1: an upgrade (exec, port-forward) cannot ride HTTP/2.
func newAPIProxy(cfg *rest.Config, authn Authenticator, c client.Reader, ttl time.Duration, log logr.Logger) (*APIProxy, error) {
	host := cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	server, err := url.Parse(host)
	if err != nil || server.Host == "" {
		return nil, fmt.Errorf("the API server's address %q is not a URL", cfg.Host)
	}
	own, err := apiTransport(cfg)
	if err != nil {
		return nil, err
	}
	anonymous, err := apiTransport(rest.AnonymousClientConfig(cfg))
	if err != nil {
		return nil, err
	}
	return NewAPIProxy(server, own, anonymous, authn, c, ttl, log.WithName("api")), nil
}

// apiTransport returns an HTTP/1.1 transport to the API server of cfg,
// with cfg's credential.
func apiTransport(cfg *rest.Config) (http.RoundTripper, error) {
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("the API server's TLS configuration: %w", err)
	}
	if tlsConfig != nil {
		tlsConfig.NextProtos = []string{"http/1.1"}
	}
	tr := NewTransport()
	tr.TLSClientConfig = tlsConfig
	rt, err := rest.HTTPWrappersForConfig(cfg, tr)
	if err != nil {
		return nil, fmt.Errorf("the API server's credential: %w", err)
	}
	return rt, nil
}

// Run serves the gateway until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options, log logr.Logger) error {
	reg := prometheus.NewRegistry()
	g, err := New(ctx, cfg, opts, log, reg)
	if err != nil {
		return err
	}
	tlsConfig, err := serverTLS(opts)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              opts.Address,
		Handler:           g.Handler(),
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    opts.MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	if g.Login != nil {
		go registerClient(ctx, g.Login, 5*time.Second, time.Minute, log)
	}
	servers := []*http.Server{srv}
	errs := make(chan error, 2)
	go func() { errs <- srv.ListenAndServeTLS(opts.TLSCertFile, opts.TLSKeyFile) }()
	if opts.MetricsAddress != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		msrv := &http.Server{Addr: opts.MetricsAddress, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, msrv)
		go func() { errs <- msrv.ListenAndServe() }()
	}
	log.Info("Serving", "address", opts.Address, "host", opts.Host, "servingDomain", opts.ServingDomain)
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range servers {
		_ = s.Shutdown(shutdown)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// serverTLS returns the TLS configuration: the files' certificate is
// loaded by ListenAndServeTLS; without files, a self-signed one is issued.
func serverTLS(opts Options) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if opts.TLSCertFile != "" {
		return cfg, nil
	}
	names := []string{"localhost"}
	if opts.Host != "" {
		names = append(names, opts.Host)
	}
	if opts.ServingDomain != "" {
		names = append(names, "*."+opts.ServingDomain)
	}
	now := time.Now()
	ca, err := certs.NewCA("accelstack-gateway-ca", now, 365*24*time.Hour)
	if err != nil {
		return nil, err
	}
	cert, key, err := ca.Issue(certs.Leaf{CommonName: names[len(names)-1], DNSNames: names, Server: true}, now, 365*24*time.Hour)
	if err != nil {
		return nil, err
	}
	cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}}
	return cfg, nil
}
