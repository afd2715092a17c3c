package deviceplugin

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/test/kubelet"
	"github.com/accelstack/accelstack/test/testutil"
)

// staticVendor serves fixed resources.
type staticVendor struct {
	NullVendor
	resources []Resource
}

func (v staticVendor) Start(context.Context) ([]Resource, error) { return v.resources, nil }

// metricsBody returns what the status handler serves at path.
func metricsBody(t *testing.T, s *Status, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, string(b)
}

// TestRegisterRetried: a kubelet that refuses the first Register and
// answers the second too late still gets the resource registered, without
// a kubelet restart or reload; until then the resource reads as not
// registered and the plugin as not ready.
func TestRegisterRetried(t *testing.T) {
	dir := testutil.ShortDir(t)
	k, err := kubelet.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	sup := NewSupervisor(Config{Vendor: "test", PluginDir: dir}, staticVendor{NullVendor{VendorName: "test"}, []Resource{plainErrResource{}}})
	sup.retryBase, sup.registerTimeout = 20*time.Millisecond, 300*time.Millisecond

	var mu sync.Mutex
	calls := 0
	var whileRefused []string
	k.SetRegisterHook(func(ctx context.Context, req *pluginapi.RegisterRequest) error {
		mu.Lock()
		calls++
		n := calls
		if n <= 2 {
			code, body := metricsBody(t, sup.Status(), "/metrics")
			ready, _ := metricsBody(t, sup.Status(), "/readyz")
			whileRefused = append(whileRefused, strings.Join([]string{http.StatusText(code), body, http.StatusText(ready)}, "|"))
		}
		mu.Unlock()
		switch n {
		case 1:
			return status.Error(codes.Unavailable, "kubelet is starting")
		case 2: // slow: answer only after the plugin has given up
			<-ctx.Done()
			return status.FromContextError(ctx.Err()).Err()
		}
		return nil
	})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sup.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if _, err := k.WaitPlugin(wctx, "example.com/dev"); err != nil {
		t.Fatalf("%v (refused: %d)", err, len(k.Refused()))
	}
	if got := len(k.Refused()); got != 2 {
		t.Errorf("refused registrations = %d, want 2", got)
	}
	mu.Lock()
	for i, s := range whileRefused {
		want := "OK|# HELP " + RegisteredMetric
		if !strings.HasPrefix(s, want) || !strings.Contains(s, RegisteredMetric+`{resource="example.com/dev"} 0`) ||
			!strings.HasSuffix(s, "|"+http.StatusText(http.StatusServiceUnavailable)) {
			t.Errorf("state during refused registration %d = %q, want the gauge at 0 and not ready", i+1, s)
		}
	}
	mu.Unlock()
	// Registered is set right after the kubelet's answer; wait for it.
	deadline := time.Now().Add(time.Minute)
	for !sup.Status().Ready() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if code, _ := metricsBody(t, sup.Status(), "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz = %d after registration, want 200", code)
	}
	if _, body := metricsBody(t, sup.Status(), "/metrics"); !strings.Contains(body, RegisteredMetric+`{resource="example.com/dev"} 1`) {
		t.Errorf("/metrics after registration:\n%s", body)
	}
}

// TestRetryStopsOnShutdown: a plugin the kubelet keeps refusing stops
// retrying when its context ends.
func TestRetryStopsOnShutdown(t *testing.T) {
	dir := testutil.ShortDir(t)
	k, err := kubelet.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	k.SetRegisterHook(func(context.Context, *pluginapi.RegisterRequest) error {
		return status.Error(codes.Unavailable, "no")
	})
	sup := NewSupervisor(Config{Vendor: "test", PluginDir: dir}, staticVendor{NullVendor{VendorName: "test"}, []Resource{plainErrResource{}}})
	sup.retryBase = time.Millisecond
	retried := make(chan struct{}, 1)
	sup.Observe(func(e Event) {
		if e.Kind == EventRetried {
			select {
			case retried <- struct{}{}:
			default:
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sup.Run(ctx) }()
	select {
	case <-retried:
	case <-time.After(time.Minute):
		t.Fatal("no retry after a refused registration")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after its context ended")
	}
	if sup.retryTimer != nil || len(sup.pending) != 0 {
		t.Errorf("after shutdown: timer %v, %d pending; want none", sup.retryTimer, len(sup.pending))
	}
	if got := sup.Status().Registered()["example.com/dev"]; got {
		t.Errorf("registered after shutdown = %v", got)
	}
}
