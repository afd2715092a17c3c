package deviceplugin

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// RegisteredMetric is the gauge, per resource, of whether the resource is
// registered with the kubelet.
const RegisteredMetric = "accelstack_deviceplugin_registered"

// Status is the registration state of each resource the plugin serves. It
// is served as the RegisteredMetric gauge on /metrics and as readiness on
// /readyz: ready once every resource is registered. Safe for concurrent use.
type Status struct {
	mu         sync.Mutex
	started    bool
	registered map[string]bool
}

// NewStatus returns the status of a plugin that has not served yet.
func NewStatus() *Status { return &Status{registered: map[string]bool{}} }

// reset starts a new round of serving: every resource not registered yet.
func (s *Status) reset(resources []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	s.registered = make(map[string]bool, len(resources))
	for _, r := range resources {
		s.registered[r] = false
	}
}

// set records whether resource is registered.
func (s *Status) set(resource string, registered bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.registered[resource] = registered
}

// Registered returns each resource and whether it is registered.
func (s *Status) Registered() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]bool, len(s.registered))
	for r, ok := range s.registered {
		out[r] = ok
	}
	return out
}

// Ready reports whether the plugin has served and every resource is
// registered. A node with no devices is ready once it has served.
func (s *Status) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return false
	}
	for _, ok := range s.registered {
		if !ok {
			return false
		}
	}
	return true
}

// Handler serves /metrics (Prometheus text format), /readyz and /healthz.
func (s *Status) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", s.serveMetrics)
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.Ready() {
			http.Error(w, "not every resource is registered with the kubelet", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	return mux
}

func (s *Status) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	reg := s.Registered()
	names := make([]string, 0, len(reg))
	for r := range reg {
		names = append(names, r)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP %s 1 when the resource is registered with the kubelet, else 0.\n# TYPE %s gauge\n", RegisteredMetric, RegisteredMetric)
	for _, r := range names {
		v := 0
		if reg[r] {
			v = 1
		}
		fmt.Fprintf(&b, "%s{resource=\"%s\"} %d\n", RegisteredMetric, labelEscaper.Replace(r), v)
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

// labelEscaper escapes a Prometheus label value.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
