package router

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/uuid"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/serving/routerconfig"
)

// The components named in the events' source and extension.
const (
	ComponentPredict     = "predict"
	ComponentTransformer = "transformer"
)

// Router is the MLService's reverse proxy.
type Router struct {
	cfg    *routerconfig.Config
	opts   Options
	logger *eventLogger
	// inFlight bounds the bodies held for events while their requests
	// are served (Options.MaxLoggedBytesInFlight).
	inFlight *byteBudget
	// targets by host label; split are the weighted releases.
	byHost      map[string]*target
	split       []*target
	total       int
	transformer *target
}

// target is a routerconfig.Target with its proxy.
type target struct {
	routerconfig.Target
	component string
	// source is the events' source; queues hold them for the logger URLs.
	source string
	queues []*queue
	up     *connPool
	proxy  *httputil.ReverseProxy
}

// forward proxies req to t: in one piece where it can (see connPool),
// otherwise through the reverse proxy.
func (t *target) forward(w http.ResponseWriter, req *http.Request) {
	if !t.up.takes(req) {
		t.proxy.ServeHTTP(w, req)
		return
	}
	if err := t.up.serve(w, req); err != nil {
		t.proxy.ErrorHandler(w, req, err)
	}
}

// New returns a router for cfg; the logger's workers stop when ctx ends.
func New(ctx context.Context, cfg *routerconfig.Config, opts Options) (*Router, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := newEventLogger(ctx, opts)
	r := &Router{cfg: cfg, opts: opts, logger: logger, inFlight: newByteBudget(opts.MaxLoggedBytesInFlight), byHost: map[string]*target{}}
	transport, dial := newTransport()
	buffers := &bufferPool{}
	mk := func(t routerconfig.Target, component string) (*target, error) {
		u, err := url.Parse(t.URL)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", t.URL, err)
		}
		p := httputil.NewSingleHostReverseProxy(u)
		p.Transport = transport
		p.BufferPool = buffers
		p.ErrorHandler = func(w http.ResponseWriter, req *http.Request, err error) {
			klog.FromContext(ctx).V(3).Info("Upstream failed", "target", t.Name, "err", err)
			w.WriteHeader(http.StatusBadGateway)
		}
		up := &connPool{target: u, dial: dial}
		tg := &target{Target: t, component: component, source: cfg.Name + "-" + component, up: up, proxy: p}
		if t.Name != "" {
			tg.source += "-" + t.Name
		}
		if t.Logger != nil {
			for _, u := range t.Logger.URLs {
				tg.queues = append(tg.queues, logger.queue(u))
			}
		}
		return tg, nil
	}
	for _, t := range cfg.Releases {
		tg, err := mk(t, ComponentPredict)
		if err != nil {
			return nil, err
		}
		if t.Host != "" {
			r.byHost[t.Host] = tg
		}
		if t.Weight > 0 {
			r.split = append(r.split, tg)
			r.total += t.Weight
		}
	}
	if cfg.Transformer != nil {
		var err error
		if r.transformer, err = mk(*cfg.Transformer, ComponentTransformer); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Stats returns the logger's counts.
func (r *Router) Stats() Stats { return r.logger.stats() }

// ServeHTTP proxies req to the target its host names, or to a release
// picked by weight.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	t := r.pick(hostLabel(req.Host))
	if t == nil {
		http.Error(w, "no release serves this MLService", http.StatusServiceUnavailable)
		return
	}
	if len(t.queues) == 0 {
		t.forward(w, req)
		return
	}
	r.serveLogged(w, req, t)
}

// pick returns the target of the host label host.
func (r *Router) pick(host string) *target {
	if t, ok := r.byHost[host]; ok {
		return t
	}
	if r.transformer != nil && host != r.cfg.PredictHost {
		return r.transformer
	}
	if r.total == 0 {
		return nil
	}
	n := rand.IntN(r.total) //nolint:gosec // traffic split, not security
	for _, t := range r.split {
		if n -= t.Weight; n < 0 {
			return t
		}
	}
	return r.split[len(r.split)-1]
}

// serveLogged proxies req to t and queues its request and response events.
func (r *Router) serveLogged(w http.ResponseWriter, req *http.Request, t *target) {
	mode := t.Logger.Mode
	id := uuid.NewString()
	var reqBody []byte
	if mode != routerconfig.ModeResponse && req.Body != nil {
		b, taken, whole, err := readBody(req.Body, req.ContentLength, r.opts.MaxLoggedBody, r.inFlight)
		defer r.inFlight.give(taken)
		if err != nil {
			http.Error(w, "reading the request", http.StatusBadRequest)
			return
		}
		if whole {
			reqBody = b
			req.Body = io.NopCloser(bytes.NewReader(b))
		} else {
			// Over MaxLoggedBody, or over the bytes in flight: proxied
			// whole, logged without its body.
			req.Body = readCloser{io.MultiReader(bytes.NewReader(b), req.Body), req.Body}
		}
	}
	if mode != routerconfig.ModeResponse {
		r.send(t, r.newEvent(req, t, id, TypeRequest, req.Header.Get("Content-Type"), reqBody))
	}
	if mode == routerconfig.ModeRequest {
		t.forward(w, req)
		return
	}
	cw := &capture{ResponseWriter: w, max: r.opts.MaxLoggedBody, budget: r.inFlight}
	defer cw.release()
	t.forward(cw, req)
	var body []byte
	if !cw.over {
		body = cw.buf
	}
	r.send(t, r.newEvent(req, t, id, TypeResponse, cw.Header().Get("Content-Type"), body))
}

// send queues e for every logger URL of t.
func (r *Router) send(t *target, e cloudevents.Event) {
	for _, q := range t.queues {
		r.logger.enqueue(q, e)
	}
}

// newEvent returns an event of typ about req with body.
func (r *Router) newEvent(req *http.Request, t *target, id, typ, contentType string, body []byte) cloudevents.Event {
	e := cloudevents.NewEvent()
	e.SetID(id)
	e.SetType(typ)
	e.SetSource(t.source)
	e.SetTime(time.Now())
	e.SetExtension(ExtComponent, t.component)
	e.SetExtension(ExtInferenceURL, req.URL.RequestURI())
	e.SetExtension(ExtMLServiceName, r.cfg.Name)
	e.SetExtension(ExtNamespace, r.cfg.Namespace)
	if tp := req.Header.Get("Traceparent"); tp != "" {
		e.SetExtension(ExtTraceParent, tp)
	}
	if contentType == "" {
		contentType = cloudevents.ApplicationJSON
	}
	if body != nil {
		_ = e.SetData(contentType, body) // bytes are kept as they are
	}
	return e
}

// hostLabel returns the first label of a Host header, without the port.
// It allocates nothing: it runs for every request.
func hostLabel(host string) string {
	if strings.HasPrefix(host, "[") { // an IPv6 literal, never a Service's name
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		label, _, _ := strings.Cut(host, ".")
		return label
	}
	if i := strings.IndexAny(host, ".:"); i >= 0 {
		return host[:i]
	}
	return host
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	c io.Closer
}

// Close closes the original body.
func (r readCloser) Close() error { return r.c.Close() }

// spreadDialer dials a name at one of its addresses picked at random, the
// others tried in turn when it refuses. A release's headless Service
// resolves to the addresses of its ready pods, and the connections are
// spread over them; Go's own dialer would always take the first.
type spreadDialer struct {
	dialer net.Dialer
	lookup func(ctx context.Context, host string) ([]string, error)
}

// DialContext dials addr, host:port, at its host's addresses in random
// order.
func (d *spreadDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if net.ParseIP(host) != nil {
		return d.dialer.DialContext(ctx, network, addr)
	}
	ips, err := d.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	rand.Shuffle(len(ips), func(i, j int) { ips[i], ips[j] = ips[j], ips[i] })
	var errs []error
	for _, ip := range ips {
		c, err := d.dialer.DialContext(ctx, network, net.JoinHostPort(ip, port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}
