package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	rbacv1 "k8s.io/api/rbac/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/accelstack/accelstack/pkg/manager"
)

// Controllers is a controller manager started by StartControllers.
type Controllers struct {
	// Manager is the running manager; its cache is what the controllers see.
	Manager ctrl.Manager
	log     *LogCapture
}

// Log returns everything the manager and its controllers logged so far, at
// every verbosity, one line per entry.
func (c *Controllers) Log() string { return c.log.String() }

// LogCapture is a logr sink that keeps every line, for tests that search the
// log (for a secret that must not be there, for instance).
type LogCapture struct {
	mu    sync.Mutex
	lines []string
}

// Logger returns a logger writing into the capture at every verbosity.
func (l *LogCapture) Logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 10})
}

// String returns the captured lines.
func (l *LogCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// StartControllers runs the accelstack controller manager (every controller
// and the conversion webhook) in-process against the control plane, serving
// the webhook where envtest pointed the CRDs, and stops it when the test ends.
// It captures the manager's log (Controllers.Log).
func (cp *ControlPlane) StartControllers(t testing.TB) *Controllers {
	t.Helper()
	wh := cp.Env.WebhookInstallOptions
	capture := &LogCapture{}
	mgr, err := manager.New(cp.Config, manager.Options{
		MetricsAddr:    "0",
		ProbeAddr:      "0",
		WebhookHost:    wh.LocalServingHost,
		WebhookPort:    wh.LocalServingPort,
		WebhookCertDir: wh.LocalServingCertDir,
		// Tests run a manager per control plane in one process.
		SkipNameValidation: true,
		Logger:             capture.Logger(),
		// As deployed: the gateway's rights bound in Project namespaces.
		Gateway: &rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "accelstack-system", Name: "gateway"},
	})
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with error: %v", err)
		}
	})

	// The CRDs convert through the webhook; wait until it serves TLS.
	addr := net.JoinHostPort(wh.LocalServingHost, strconv.Itoa(wh.LocalServingPort))
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // readiness probe of a test-owned server
		if err == nil {
			_ = conn.Close()
			return &Controllers{Manager: mgr, log: capture}
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Errorf("webhook server at %s not serving after 30s: %w", addr, err))
		}
		select {
		case err := <-done:
			done <- err // for the cleanup above
			t.Fatalf("manager exited early: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
