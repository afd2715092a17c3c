// Package routerconfig is the contract between the MLService controller
// and the router it runs (cmd/serving-router, package
// pkg/serving/router): the Config the controller passes the router as
// JSON in EnvConfig, and the router's health path. It is a leaf, importing
// only the standard library, so that the controllers link none of the
// router and its CloudEvents client.
package routerconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
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

// HealthPath is the router's own health check, whatever the host.
const HealthPath = "/.router/healthz"

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
