package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/google/uuid"
	"golang.org/x/time/rate"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/eventlistener/filter"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// Defaults of ListenerConfig.
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultRate         = 50
	DefaultBurst        = 100
	DefaultSendTimeout  = 5 * time.Second
	DefaultMaxInFlight  = 256
	// DefaultDeliveryDeadline is how long an acknowledged event is retried:
	// long enough to outlast an API server restart or an outage of a few
	// minutes.
	DefaultDeliveryDeadline = 5 * time.Minute
	DefaultRetryBackoff     = 200 * time.Millisecond
	// DefaultMaxSpoolBytes bounds the bodies of the events held until
	// delivered, within the listener's default memory limit.
	DefaultMaxSpoolBytes = 64 << 20
)

// ListenerConfig configures a Listener.
type ListenerConfig struct {
	// Namespace and Name are the EventListener's; they make the events'
	// source.
	Namespace, Name string
	// Subscribers are the URLs every event is delivered to.
	Subscribers []string
	// MaxBodyBytes bounds a request's body; a larger one gets 413.
	MaxBodyBytes int64
	// Rate and Burst make the token bucket of requests: Rate a second, at
	// most Burst at once; a request beyond gets 429.
	Rate  float64
	Burst int
	// SendTimeout bounds one delivery attempt. A delivery that fails with
	// a network error or a 404, 408, 429 or 5xx is tried again, after
	// RetryBackoff doubling up to maxRetryBackoff, with jitter, until
	// DeliveryDeadline after the event was acknowledged.
	SendTimeout      time.Duration
	RetryBackoff     time.Duration
	DeliveryDeadline time.Duration
	// MaxInFlight bounds the events being delivered, and MaxSpoolBytes
	// their bodies together; a request beyond either gets 503, so that
	// the sender keeps it rather than the listener.
	MaxInFlight   int
	MaxSpoolBytes int64
	// SecretFile, when set, is the file holding the listener's shared
	// secret: a request then needs a GitHub signature or a GitLab token
	// made with it (see Verifier), or gets 401.
	SecretFile string
}

// DefaultListenerConfig returns a config with the defaults and no
// listener.
func DefaultListenerConfig() ListenerConfig {
	return ListenerConfig{
		MaxBodyBytes:     DefaultMaxBodyBytes,
		Rate:             DefaultRate,
		Burst:            DefaultBurst,
		SendTimeout:      DefaultSendTimeout,
		RetryBackoff:     DefaultRetryBackoff,
		DeliveryDeadline: DefaultDeliveryDeadline,
		MaxInFlight:      DefaultMaxInFlight,
		MaxSpoolBytes:    DefaultMaxSpoolBytes,
	}
}

// Validate returns an error naming the first field out of range.
func (c ListenerConfig) Validate() error {
	switch {
	case c.Namespace == "" || c.Name == "":
		return errors.New("the listener's namespace and name are required")
	case c.MaxBodyBytes < 1:
		return fmt.Errorf("the body limit %d is not positive", c.MaxBodyBytes)
	case c.Rate <= 0 || c.Burst < 1:
		return fmt.Errorf("the rate %g/s, burst %d, lets no request through", c.Rate, c.Burst)
	case c.SendTimeout <= 0:
		return fmt.Errorf("the send timeout %s is not positive", c.SendTimeout)
	case c.RetryBackoff <= 0 || c.DeliveryDeadline <= 0:
		return fmt.Errorf("the retry backoff %s or the delivery deadline %s is not positive", c.RetryBackoff, c.DeliveryDeadline)
	case c.MaxSpoolBytes < c.MaxBodyBytes:
		return fmt.Errorf("the spool of %d bytes holds no body of %d bytes", c.MaxSpoolBytes, c.MaxBodyBytes)
	case c.MaxInFlight < 1:
		return fmt.Errorf("the in-flight limit %d is not positive", c.MaxInFlight)
	}
	for _, s := range c.Subscribers {
		if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
			return fmt.Errorf("the subscriber %q is not an http(s) URL", s)
		}
	}
	return nil
}

// Sender delivers an event to the target in ctx; the CloudEvents HTTP
// client is one.
type Sender interface {
	Send(ctx context.Context, e event.Event) protocol.Result
}

// Listener is the http.Handler of an EventListener. Close waits for the
// deliveries under way.
type Listener struct {
	cfg    ListenerConfig
	sender Sender
	// verifier checks requests when the listener has a secret.
	verifier *Verifier
	limiter  *rate.Limiter
	inFlight chan struct{}
	// spool is the bytes of the events held until delivered.
	spool spool
	wg    sync.WaitGroup
	// ctx ends the deliveries under way; cancel ends it.
	ctx    context.Context
	cancel context.CancelFunc
}

var _ http.Handler = (*Listener)(nil)

// NewListener returns the listener of cfg delivering with sender.
func NewListener(cfg ListenerConfig, sender Sender) (*Listener, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var verifier *Verifier
	if cfg.SecretFile != "" {
		var err error
		if verifier, err = NewVerifier(cfg.SecretFile); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Listener{
		cfg:      cfg,
		sender:   sender,
		verifier: verifier,
		limiter:  rate.NewLimiter(rate.Limit(cfg.Rate), cfg.Burst),
		inFlight: make(chan struct{}, cfg.MaxInFlight),
		ctx:      ctx,
		cancel:   cancel,
	}, nil
}

// NewSender returns a CloudEvents HTTP client whose attempts time out
// after timeout.
func NewSender(timeout time.Duration) (Sender, error) {
	c, err := cloudevents.NewClientHTTP(cehttp.WithClient(http.Client{Timeout: timeout}))
	if err != nil {
		return nil, fmt.Errorf("creating the CloudEvents client: %w", err)
	}
	return c, nil
}

// ServeHTTP takes a JSON POST: it replies 405 to another method, 429 over
// the rate, 415 to a body declared as something else than JSON, 413 to a
// body over the limit, 401 to a request that fails the verification of a
// listener with a secret, 400 to a body that is not JSON, 503 when too
// many events are being delivered, and otherwise "success", delivering
// the event in the background. A GitLab token is no part of the event.
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := klog.FromContext(r.Context())
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "only POST is allowed", http.StatusMethodNotAllowed)
		return
	}
	if !l.limiter.Allow() {
		log.V(2).Info("Refusing a request over the rate limit")
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many requests", http.StatusTooManyRequests)
		return
	}
	if !jsonContentType(r.Header.Get("Content-Type")) {
		http.Error(w, "the body must be JSON (Content-Type: application/json)", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, l.cfg.MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, fmt.Sprintf("the body is over %d bytes", l.cfg.MaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the body failed", http.StatusBadRequest)
		return
	}
	header := r.Header
	if l.verifier != nil {
		if err := l.verifier.Verify(header, body); err != nil {
			log.V(2).Info("Refusing a request that fails verification", "reason", err.Error())
			http.Error(w, "the request is not signed with the listener's secret", http.StatusUnauthorized)
			return
		}
		// The token is the secret: it must not reach the triggers' params.
		header = header.Clone()
		header.Del(GitLabTokenHeader)
	}
	doc, err := filter.Document(header, body)
	if err != nil {
		http.Error(w, "the body is not JSON", http.StatusBadRequest)
		return
	}
	size := int64(len(doc))
	if !l.spool.take(size, l.cfg.MaxSpoolBytes) {
		log.Info("Refusing a request: the events being delivered hold too many bytes", "limit", l.cfg.MaxSpoolBytes)
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many events being delivered", http.StatusServiceUnavailable)
		return
	}
	select {
	case l.inFlight <- struct{}{}:
	default:
		l.spool.give(size)
		log.Info("Refusing a request: too many events being delivered", "limit", l.cfg.MaxInFlight)
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many events being delivered", http.StatusServiceUnavailable)
		return
	}
	e := l.event(doc)
	log.V(2).Info("Accepted an event", "eventID", e.ID(), "subscribers", len(l.cfg.Subscribers))
	l.wg.Add(1)
	go func() {
		defer func() { l.spool.give(size); <-l.inFlight; l.wg.Done() }()
		l.deliver(klog.NewContext(l.ctx, log), e)
	}()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "success")
}

// jsonContentType reports whether a request of Content-Type ct may hold
// JSON: none, a JSON type (application/json, application/*+json), or curl's
// default for -d, application/x-www-form-urlencoded, as the seed's example
// posts with `curl -X POST <url> -d '{"hello": "world"}'`. The body is
// parsed as JSON whatever the type.
func jsonContentType(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) ||
		mt == "text/json" || mt == "application/x-www-form-urlencoded"
}

// event returns the CloudEvent of the document doc.
func (l *Listener) event(doc []byte) event.Event {
	e := cloudevents.NewEvent()
	e.SetID(uuid.NewString())
	e.SetSource(serverconfig.Source(l.cfg.Namespace, l.cfg.Name))
	e.SetType(EventType)
	e.SetTime(time.Now())
	_ = e.SetData(cloudevents.ApplicationJSON, doc) // bytes are kept as they are
	return e
}

// Close waits for the deliveries under way until ctx ends, then cancels
// those left.
func (l *Listener) Close(ctx context.Context) {
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		l.cancel()
		<-done
	}
	l.cancel()
}
