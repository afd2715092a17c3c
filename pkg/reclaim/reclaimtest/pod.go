package reclaimtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/accelstack/accelstack/pkg/activity"
)

// JupyterStatus is the answer of Jupyter's /api/status.
type JupyterStatus struct {
	Started      time.Time `json:"started"`
	LastActivity time.Time `json:"last_activity"`
	Connections  int       `json:"connections"`
	Kernels      int       `json:"kernels"`
}

// JupyterKernel is a kernel in the answer of /api/kernels.
type JupyterKernel struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	LastActivity   time.Time `json:"last_activity"`
	ExecutionState string    `json:"execution_state"`
	Connections    int       `json:"connections"`
}

// Request is a request a Pod received.
type Request struct {
	// Path and RawQuery of the URL.
	Path, RawQuery string
	// Probe tells whether it carried activity.ProbeHeader.
	Probe bool
	// Authorization is its Authorization header.
	Authorization string
	// Cookie is its Cookie header.
	Cookie string
}

// Pod serves what a workload pod serves on the activity sidecar's port:
// the sidecar's report and, behind it, Jupyter's API under any base path.
// Like the real sidecar, it counts a request to Jupyter without
// activity.ProbeHeader as a client's (its LastRequest, at the time Now
// gives); unless CountProbes is set, probes are not counted.
type Pod struct {
	srv *httptest.Server

	mu          sync.Mutex
	now         func() time.Time
	report      activity.Report
	reportCode  int
	jupyter     *JupyterStatus
	kernels     []JupyterKernel
	jupyterCode int
	token       string
	countProbes bool
	requests    []Request
}

// NewPod starts a Pod whose sidecar started at since; now tells the time
// of counted requests. Jupyter answers 404 until SetJupyter.
func NewPod(t testing.TB, since time.Time, now func() time.Time) *Pod {
	p := &Pod{now: now, report: activity.Report{Since: since}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// Addr is the host:port the Pod listens on.
func (p *Pod) Addr() string { return strings.TrimPrefix(p.srv.URL, "http://") }

// SetReport changes the sidecar's report.
func (p *Pod) SetReport(edit func(r *activity.Report)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	edit(&p.report)
}

// FailReport makes the report answer code (0: answer it).
func (p *Pod) FailReport(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reportCode = code
}

// SetJupyter makes Jupyter's API answer status and kernels.
func (p *Pod) SetJupyter(status JupyterStatus, kernels ...JupyterKernel) {
	p.mu.Lock()
	defer p.mu.Unlock()
	status.Kernels = len(kernels)
	p.jupyter, p.kernels, p.jupyterCode = &status, kernels, 0
}

// FailJupyter makes Jupyter's API answer code, e.g. 403 for a server that
// wants a token.
func (p *Pod) FailJupyter(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.jupyterCode = code
}

// RequireToken makes Jupyter's API answer 403 to a request without
// "Authorization: token <token>".
func (p *Pod) RequireToken(token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.token = token
}

// CountProbes makes the sidecar count the Keeper's requests as a client's,
// as a sidecar that ignores activity.ProbeHeader would.
func (p *Pod) CountProbes(count bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.countProbes = count
}

// Requests returns the requests received so far.
func (p *Pod) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

func (p *Pod) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	probe := r.Header.Get(activity.ProbeHeader) != ""
	p.requests = append(p.requests, Request{Path: r.URL.Path, RawQuery: r.URL.RawQuery, Probe: probe, Authorization: r.Header.Get("Authorization"), Cookie: r.Header.Get("Cookie")})
	if r.URL.Path == activity.ReportPath {
		if p.reportCode != 0 {
			w.WriteHeader(p.reportCode)
			return
		}
		writeJSON(w, p.report)
		return
	}
	if !probe || p.countProbes {
		now := p.now()
		p.report.LastRequest = &now
	}
	switch {
	case p.jupyter == nil:
		http.NotFound(w, r)
	case p.jupyterCode != 0:
		w.WriteHeader(p.jupyterCode)
	case p.token != "" && r.Header.Get("Authorization") != "token "+p.token:
		w.WriteHeader(http.StatusForbidden)
	case strings.HasSuffix(r.URL.Path, "/api/status"):
		writeJSON(w, p.jupyter)
	case strings.HasSuffix(r.URL.Path, "/api/kernels"):
		writeJSON(w, p.kernels)
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
