package router

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// EnvConfig is the environment variable the controller passes the
// router's Config in, as JSON.
const EnvConfig = "ROUTER_CONFIG"

// The logger modes, as in LoggerSpec.mode.
const (
	ModeAll      = "all"
	ModeRequest  = "request"
	ModeResponse = "response"
)

// Config is what the router serves.
type Config struct {
	// Name and Namespace of the MLService, for the events.
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// PredictHost is the host label whose requests are always split
	// between the releases, even with a transformer (the transformer's
	// $PREDICTOR_HOST).
	PredictHost string `json:"predictHost,omitempty"`
	// Releases and their weights in the split.
	Releases []Target `json:"releases"`
	// Transformer, when set, serves the global URL's requests instead of
	// the split.
	Transformer *Target `json:"transformer,omitempty"`
}

// Target is a release or the transformer.
type Target struct {
	// Name of the release; empty for the transformer.
	Name string `json:"name,omitempty"`
	// Host is the host label of the target's own URL; empty for none.
	Host string `json:"host,omitempty"`
	// URL the requests are proxied to, e.g. http://svc.ns.svc:80.
	URL string `json:"url"`
	// Weight of the release in the split, 0 to 100.
	Weight int `json:"weight,omitempty"`
	// Logger, when set, sends the target's requests and responses.
	Logger *Logger `json:"logger,omitempty"`
}

// Logger says where and what to send.
type Logger struct {
	// URLs the events are POSTed to.
	URLs []string `json:"urls"`
	// Mode: all (default), request or response.
	Mode string `json:"mode,omitempty"`
}

// Options tunes the router.
type Options struct {
	// QueueSize bounds the events waiting for each logger URL.
	QueueSize int
	// Workers send the events of each logger URL at once.
	Workers int
	// SendTimeout bounds one delivery of an event.
	SendTimeout time.Duration
	// MaxLoggedBody is the largest request or response body the events
	// carry; a larger body is proxied whole and its event carries none.
	MaxLoggedBody int
	// MaxQueuedBytes bounds the bodies of the events waiting for each
	// logger URL; an event that would exceed it is dropped.
	MaxQueuedBytes int
	// MaxLoggedBytesInFlight bounds the request and response bodies held
	// for events by all requests being served at once; a body that does
	// not fit is proxied as it is and its event carries none.
	MaxLoggedBytesInFlight int64

	// ReadHeaderTimeout bounds the reading of a request's head,
	// ReadTimeout of the whole request with its body, IdleTimeout the wait
	// for the next request on a kept connection; 0 for none.
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// MaxConns bounds the client connections open at once; more wait to
	// be accepted. 0 for no bound.
	MaxConns int
}

// DefaultOptions are the options of cmd/serving-router.
func DefaultOptions() Options {
	return Options{
		QueueSize: 1024, Workers: 4, SendTimeout: 5 * time.Second, MaxLoggedBody: 4 << 20, MaxQueuedBytes: 64 << 20,
		MaxLoggedBytesInFlight: DefaultMaxLoggedBytesInFlight,
		ReadHeaderTimeout:      10 * time.Second, ReadTimeout: DefaultReadTimeout, IdleTimeout: DefaultIdleTimeout,
		MaxConns: DefaultMaxConns,
	}
}

// Defaults of the server's bounds.
const (
	// DefaultReadTimeout lets a client send a request of the largest body
	// logged (4 MiB) at under 100 KB/s and still bounds how long a client
	// that trickles its body holds a connection.
	DefaultReadTimeout = 60 * time.Second
	// DefaultIdleTimeout closes kept connections idle as long as the
	// router's own to the predictors (90 s).
	DefaultIdleTimeout = 90 * time.Second
	// DefaultMaxConns bounds the connections at 4096: a connection in the
	// middle of a request holds about 20 KiB of heap (buffers, request,
	// the first 4 KiB of its body; TestSlowBodies measures it) and a
	// goroutine of 8 KiB or more, so some 120 MiB at most, and no client
	// fills the pod's file descriptors; far more than the clients of one
	// MLService keep open.
	DefaultMaxConns = 4096
	// DefaultMaxLoggedBytesInFlight holds the bodies of 16 requests of the
	// largest body logged at once, as much as one logger URL's queue.
	DefaultMaxLoggedBytesInFlight = 64 << 20
)

// ParseConfig reads and checks a JSON Config.
func ParseConfig(b []byte) (*Config, error) {
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("parsing the router config: %w", err)
	}
	return &c, c.Validate()
}

// Validate checks the URLs, weights and modes of c.
func (c *Config) Validate() error {
	if len(c.Releases) == 0 {
		return errors.New("the router config has no release")
	}
	targets := append([]Target(nil), c.Releases...)
	if c.Transformer != nil {
		targets = append(targets, *c.Transformer)
	}
	for _, t := range targets {
		if err := checkURL(t.URL); err != nil {
			return fmt.Errorf("release %q: %w", t.Name, err)
		}
		if t.Weight < 0 || t.Weight > 100 {
			return fmt.Errorf("release %q: weight %d is not 0 to 100", t.Name, t.Weight)
		}
		if l := t.Logger; l != nil {
			switch l.Mode {
			case "", ModeAll, ModeRequest, ModeResponse:
			default:
				return fmt.Errorf("release %q: unknown logger mode %q", t.Name, l.Mode)
			}
			for _, u := range l.URLs {
				if err := checkURL(u); err != nil {
					return fmt.Errorf("release %q logger: %w", t.Name, err)
				}
			}
		}
	}
	return nil
}

// checkURL checks that s is an http(s) URL with a host.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("URL %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("URL %q is not http(s)://host", s)
	}
	return nil
}
