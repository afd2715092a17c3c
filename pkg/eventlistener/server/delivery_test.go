package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// failingFor is a subscriber that answers status to its first n attempts,
// then 200; it counts the attempts.
func failingFor(t *testing.T, n int32, status int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if attempts.Add(1) <= n {
			w.WriteHeader(status)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return srv, &attempts
}

// TestListenerOutlastsOutage checks that an acknowledged event is retried
// as long as its subscriber is down, well past a few attempts.
func TestListenerOutlastsOutage(t *testing.T) {
	for name, status := range map[string]int{"503": http.StatusServiceUnavailable, "429": http.StatusTooManyRequests, "404": http.StatusNotFound} {
		t.Run(name, func(t *testing.T) {
			srv, attempts := failingFor(t, 8, status)
			sender, err := NewSender(time.Second)
			if err != nil {
				t.Fatal(err)
			}
			cfg := listenerConfig(srv.URL)
			cfg.RetryBackoff = time.Millisecond
			l := newTestListener(t, cfg, sender)
			if code, _ := post(l, http.MethodPost, "application/json", `{}`); code != http.StatusOK {
				t.Fatalf("reply %d", code)
			}
			l.Close(context.Background())
			if got := attempts.Load(); got != 9 {
				t.Errorf("%d attempts, want 9: retried through 8 failures until delivered", got)
			}
		})
	}
}

// TestListenerDeliveryDeadline checks that a delivery stops at its
// deadline.
func TestListenerDeliveryDeadline(t *testing.T) {
	srv, attempts := failingFor(t, 1<<30, http.StatusServiceUnavailable)
	sender, err := NewSender(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cfg := listenerConfig(srv.URL)
	cfg.RetryBackoff, cfg.DeliveryDeadline = time.Millisecond, 200*time.Millisecond
	l := newTestListener(t, cfg, sender)
	if code, _ := post(l, http.MethodPost, "application/json", `{}`); code != http.StatusOK {
		t.Fatalf("reply %d", code)
	}
	l.Close(context.Background()) // returns once the deadline passed
	if got := attempts.Load(); got < 2 {
		t.Errorf("%d attempts before the deadline", got)
	}
}

// TestListenerSpoolBytes checks that the bodies of the events held are
// bounded: a request past the bound gets 503 and is not acknowledged.
func TestListenerSpoolBytes(t *testing.T) {
	s := newFakeSender()
	s.block = make(chan struct{})
	cfg := listenerConfig("http://a")
	cfg.MaxBodyBytes, cfg.MaxSpoolBytes = 128, 200
	l := newTestListener(t, cfg, s)
	body := `{"a": "` + strings.Repeat("x", 60) + `"}`
	if code, _ := post(l, http.MethodPost, "application/json", body); code != http.StatusOK {
		t.Fatalf("first reply %d", code)
	}
	if code, _ := post(l, http.MethodPost, "application/json", body); code != http.StatusServiceUnavailable {
		t.Errorf("second reply %d with the spool full, want 503", code)
	}
	close(s.block)
	s.wait(t, 1)
}

// TestListenerToTriggerOutage runs a listener and a trigger as HTTP servers
// while the trigger's API server fails (connections refused, then 503):
// the run is created once it is back, from the one event the listener
// acknowledged.
func TestListenerToTriggerOutage(t *testing.T) {
	var calls atomic.Int32
	const failures = 8
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if calls.Add(1) <= failures/2 {
				return errors.New("connection refused")
			}
			return c.List(ctx, list, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if calls.Add(1) <= failures {
				return apierrors.NewServiceUnavailable("etcd is down")
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	cfg := triggerConfig()
	cfg.Rate, cfg.Burst = 1000, 1000
	tr, err := NewTrigger(cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	h, err := tr.Handler(context.Background(), DefaultMaxEventBytes)
	if err != nil {
		t.Fatal(err)
	}
	triggerSrv := httptest.NewServer(h)
	defer triggerSrv.Close()
	sender, err := NewSender(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lcfg := listenerConfig(triggerSrv.URL)
	lcfg.RetryBackoff = time.Millisecond
	l := newTestListener(t, lcfg, sender)
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"object_kind": "merge_request", "hello": "world"}`))
	r.Header.Set("X-Gitlab-Event", "Merge Request Hook")
	w := httptest.NewRecorder()
	l.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("listener replied %d", w.Code)
	}
	l.Close(context.Background())
	if got := runs(t, c); len(got) != 1 {
		t.Errorf("%d runs after the outage, want 1", len(got))
	}
}
