package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/accelstack/accelstack/pkg/manager"
)

// StartControllers runs the accelstack controller manager (every controller
// and the conversion webhook) in-process against the control plane, serving
// the webhook where envtest pointed the CRDs, and stops it when the test ends.
func (cp *ControlPlane) StartControllers(t testing.TB) {
	t.Helper()
	wh := cp.Env.WebhookInstallOptions
	mgr, err := manager.New(cp.Config, manager.Options{
		MetricsAddr:    "0",
		ProbeAddr:      "0",
		WebhookHost:    wh.LocalServingHost,
		WebhookPort:    wh.LocalServingPort,
		WebhookCertDir: wh.LocalServingCertDir,
		// Tests run a manager per control plane in one process.
		SkipNameValidation: true,
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
			return
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
