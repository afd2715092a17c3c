package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/accelstack/accelstack/test/harness"
)

// buildNodeAgent builds cmd/node-agent once per test binary.
func buildNodeAgent(t *testing.T) string {
	t.Helper()
	bin, err := harness.BuildCmd("node-agent")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startNodeAgent runs the agent binary on a free loopback port and waits
// for /healthz; it returns the base URL.
func startNodeAgent(t *testing.T, args ...string) (string, *harness.Process) {
	t.Helper()
	bin := buildNodeAgent(t)
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p := harness.StartProcess(t, "node-agent", bin, append([]string{"--address=" + addr}, args...))
	base := "http://" + addr
	if err := p.WaitReady(60*time.Second, func(ctx context.Context) error {
		_, err := naGet(ctx, base+"/healthz")
		return err
	}); err != nil {
		t.Fatalf("node-agent not ready: %v", err)
	}
	return base, p
}

func naGet(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return body, nil
}

// naEventually polls cond until it returns nil or the deadline passes; the
// deadline only bounds a hung test, it asserts nothing about speed.
func naEventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: %v", what, err)
}
