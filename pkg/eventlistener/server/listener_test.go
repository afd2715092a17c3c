package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/protocol"
	"github.com/google/go-cmp/cmp"
)

// sent is an event a fakeSender got, and where to.
type sent struct {
	target string
	event  event.Event
}

// fakeSender records events; block, when set, holds each send until it
// is closed.
type fakeSender struct {
	mu    sync.Mutex
	sent  []sent
	block chan struct{}
	got   chan struct{}
}

func newFakeSender() *fakeSender { return &fakeSender{got: make(chan struct{}, 100)} }

func (s *fakeSender) Send(ctx context.Context, e event.Event) protocol.Result {
	if s.block != nil {
		<-s.block
	}
	s.mu.Lock()
	s.sent = append(s.sent, sent{target: cloudevents.TargetFromContext(ctx).String(), event: e})
	s.mu.Unlock()
	s.got <- struct{}{}
	return cloudevents.ResultACK
}

// wait waits for n sends.
func (s *fakeSender) wait(t *testing.T, n int) []sent {
	t.Helper()
	for range n {
		select {
		case <-s.got:
		case <-time.After(10 * time.Second):
			t.Fatalf("waited 10s for %d sends", n)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

func listenerConfig(subscribers ...string) ListenerConfig {
	cfg := DefaultListenerConfig()
	cfg.Namespace, cfg.Name, cfg.Subscribers = "demo", "event-listener-sample", subscribers
	return cfg
}

func newTestListener(t *testing.T, cfg ListenerConfig, sender Sender) *Listener {
	t.Helper()
	l, err := NewListener(cfg, sender)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

// post sends a request to h and returns the status and body of the reply.
func post(h http.Handler, method, contentType, body string) (int, string) {
	r := httptest.NewRequest(method, "/t9k/workflow/triggers/demo/event-listener-sample", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	r.Header.Set("X-Github-Event", "push")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(b)
}

func TestListenerReplies(t *testing.T) {
	cfg := listenerConfig()
	cfg.MaxBodyBytes = 64
	l := newTestListener(t, cfg, newFakeSender())
	tests := []struct {
		name, method, contentType, body string
		wantCode                        int
	}{
		{name: "JSON", method: http.MethodPost, contentType: "application/json", body: `{"hello": "world"}`, wantCode: http.StatusOK},
		{name: "JSON with charset", method: http.MethodPost, contentType: "application/json; charset=utf-8", body: `{}`, wantCode: http.StatusOK},
		{name: "a +json type", method: http.MethodPost, contentType: "application/vnd.github+json", body: `[1]`, wantCode: http.StatusOK},
		{name: "no Content-Type", method: http.MethodPost, body: `{"a": 1}`, wantCode: http.StatusOK},
		{name: "curl -d", method: http.MethodPost, contentType: "application/x-www-form-urlencoded", body: `{"hello": "world"}`, wantCode: http.StatusOK},
		{name: "GET", method: http.MethodGet, wantCode: http.StatusMethodNotAllowed},
		{name: "PUT", method: http.MethodPut, contentType: "application/json", body: `{}`, wantCode: http.StatusMethodNotAllowed},
		{name: "XML", method: http.MethodPost, contentType: "text/xml", body: `<a/>`, wantCode: http.StatusUnsupportedMediaType},
		{name: "bad Content-Type", method: http.MethodPost, contentType: "application/json;;", body: `{}`, wantCode: http.StatusUnsupportedMediaType},
		{name: "not JSON", method: http.MethodPost, contentType: "application/json", body: `{"hello": `, wantCode: http.StatusBadRequest},
		{name: "form", method: http.MethodPost, contentType: "application/x-www-form-urlencoded", body: `a=b`, wantCode: http.StatusBadRequest},
		{name: "empty", method: http.MethodPost, contentType: "application/json", wantCode: http.StatusBadRequest},
		{name: "too large", method: http.MethodPost, contentType: "application/json", body: `{"a": "` + strings.Repeat("x", 64) + `"}`, wantCode: http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(l, tt.method, tt.contentType, tt.body)
			if code != tt.wantCode {
				t.Errorf("%s %s: %d %q, want %d", tt.method, tt.contentType, code, body, tt.wantCode)
			}
			if code == http.StatusOK && body != "success" {
				t.Errorf("reply %q, want success", body)
			}
		})
	}
}

func TestListenerAllowHeader(t *testing.T) {
	l := newTestListener(t, listenerConfig(), newFakeSender())
	w := httptest.NewRecorder()
	l.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if got := w.Header().Get("Allow"); got != http.MethodPost {
		t.Errorf("Allow: %q, want POST", got)
	}
}

func TestListenerRateLimit(t *testing.T) {
	cfg := listenerConfig()
	cfg.Rate, cfg.Burst = 0.001, 3
	l := newTestListener(t, cfg, newFakeSender())
	var codes []int
	for range 5 {
		code, _ := post(l, http.MethodPost, "application/json", `{}`)
		codes = append(codes, code)
	}
	want := []int{200, 200, 200, 429, 429}
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
}

func TestListenerEvent(t *testing.T) {
	s := newFakeSender()
	l := newTestListener(t, listenerConfig("http://a.demo.svc.cluster.local", "http://b.demo.svc.cluster.local"), s)
	if code, body := post(l, http.MethodPost, "application/json", `{"hello": "world", "n": [1, 2]}`); code != http.StatusOK {
		t.Fatalf("reply %d %q", code, body)
	}
	got := s.wait(t, 2)
	var targets []string
	for _, g := range got {
		targets = append(targets, g.target)
	}
	slices.Sort(targets)
	if diff := cmp.Diff([]string{"http://a.demo.svc.cluster.local", "http://b.demo.svc.cluster.local"}, targets); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	e := got[0].event
	if e.ID() == "" || e.ID() != got[1].event.ID() {
		t.Errorf("event IDs %q and %q, want one ID", e.ID(), got[1].event.ID())
	}
	if e.Source() != "/t9k/workflow/triggers/demo/event-listener-sample" || e.Type() != EventType || e.DataContentType() != "application/json" {
		t.Errorf("event source %q type %q content type %q", e.Source(), e.Type(), e.DataContentType())
	}
	if err := e.Validate(); err != nil {
		t.Errorf("the event is not valid: %v", err)
	}
	var doc struct {
		Header map[string]string `json:"header"`
		Body   map[string]any    `json:"body"`
	}
	if err := json.Unmarshal(e.Data(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Header["X-Github-Event"] != "push" || doc.Header["Content-Type"] != "application/json" {
		t.Errorf("header %v", doc.Header)
	}
	if diff := cmp.Diff(map[string]any{"hello": "world", "n": []any{1.0, 2.0}}, doc.Body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestListenerRepliesBeforeDelivering(t *testing.T) {
	s := newFakeSender()
	s.block = make(chan struct{})
	cfg := listenerConfig("http://a")
	cfg.MaxInFlight = 1
	l := newTestListener(t, cfg, s)
	if code, _ := post(l, http.MethodPost, "application/json", `{}`); code != http.StatusOK {
		t.Fatalf("first reply %d while its delivery hangs, want 200", code)
	}
	if code, _ := post(l, http.MethodPost, "application/json", `{}`); code != http.StatusServiceUnavailable {
		t.Errorf("second reply %d with one delivery in flight of 1, want 503", code)
	}
	close(s.block)
	s.wait(t, 1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _ := post(l, http.MethodPost, "application/json", `{}`)
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reply %d after the delivery ended, want 200", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestListenerRetries(t *testing.T) {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if attempts.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	sender, err := NewSender(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cfg := listenerConfig(srv.URL)
	l := newTestListener(t, cfg, sender)
	if code, _ := post(l, http.MethodPost, "application/json", `{}`); code != http.StatusOK {
		t.Fatalf("reply %d", code)
	}
	l.Close(context.Background())
	if got := attempts.Load(); got != 3 {
		t.Errorf("%d attempts, want 3 (retried after each 503)", got)
	}
}

func TestListenerGivesUp(t *testing.T) {
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		attempts.Add(1)
		w.WriteHeader(http.StatusUnprocessableEntity)
	}))
	defer srv.Close()
	sender, err := NewSender(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l := newTestListener(t, listenerConfig(srv.URL), sender)
	if code, _ := post(l, http.MethodPost, "application/json", `{}`); code != http.StatusOK {
		t.Fatalf("reply %d", code)
	}
	l.Close(context.Background())
	if got := attempts.Load(); got != 1 {
		t.Errorf("%d attempts, want 1 (422 is not retried)", got)
	}
}

func TestListenerConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*ListenerConfig)
		wantErr bool
	}{
		{name: "defaults", change: func(*ListenerConfig) {}},
		{name: "no name", change: func(c *ListenerConfig) { c.Name = "" }, wantErr: true},
		{name: "no body", change: func(c *ListenerConfig) { c.MaxBodyBytes = 0 }, wantErr: true},
		{name: "no rate", change: func(c *ListenerConfig) { c.Rate = 0 }, wantErr: true},
		{name: "no burst", change: func(c *ListenerConfig) { c.Burst = 0 }, wantErr: true},
		{name: "no timeout", change: func(c *ListenerConfig) { c.SendTimeout = 0 }, wantErr: true},
		{name: "no deadline", change: func(c *ListenerConfig) { c.DeliveryDeadline = 0 }, wantErr: true},
		{name: "no backoff", change: func(c *ListenerConfig) { c.RetryBackoff = 0 }, wantErr: true},
		{name: "spool below a body", change: func(c *ListenerConfig) { c.MaxSpoolBytes = c.MaxBodyBytes - 1 }, wantErr: true},
		{name: "no in-flight", change: func(c *ListenerConfig) { c.MaxInFlight = 0 }, wantErr: true},
		{name: "subscriber", change: func(c *ListenerConfig) { c.Subscribers = []string{"http://a.b"} }},
		{name: "bad subscriber", change: func(c *ListenerConfig) { c.Subscribers = []string{"a.b"} }, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := listenerConfig()
			tt.change(&cfg)
			if err := cfg.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}
