package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/test/testutil"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*Config)
		wantErr string
	}{
		{"default", func(*Config) {}, ""},
		{"rstudio", func(c *Config) { c.Upstream = "http://127.0.0.1:8787" }, ""},
		{"upstream with a slash", func(c *Config) { c.Upstream = "http://127.0.0.1:8888/" }, ""},
		{"no SSH", func(c *Config) { c.SSHAddress, c.SSHUpstream = "", "" }, ""},
		{"upstream without a port", func(c *Config) { c.Upstream = "http://127.0.0.1" }, "--upstream"},
		{"upstream over https", func(c *Config) { c.Upstream = "https://127.0.0.1:8888" }, "--upstream"},
		{"upstream with a path", func(c *Config) { c.Upstream = "http://127.0.0.1:8888/lab" }, "--upstream"},
		{"ssh upstream without a port", func(c *Config) { c.SSHUpstream = "127.0.0.1" }, "--ssh-upstream"},
		{"no address", func(c *Config) { c.Address = "" }, "--address"},
		{"no sessions", func(c *Config) { c.MaxSSHSessions = 0 }, "--max-ssh-sessions"},
		{"no dial timeout", func(c *Config) { c.DialTimeout = 0 }, "--dial-timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Validate() = %v, want an error naming %s", err, tc.wantErr)
			}
		})
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestRun runs the whole sidecar in front of a Jupyter-like server and an
// echo "sshd", and reads its report as the Resource Keeper would.
func TestRun(t *testing.T) {
	up := newUpstream(t)
	cfg := DefaultConfig()
	cfg.Address, cfg.SSHAddress = freeAddr(t), freeAddr(t)
	cfg.Upstream, cfg.SSHUpstream = up.srv.URL, echoServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	}()

	base := "http://" + cfg.Address
	testutil.Eventually(context.Background(), t, 10*time.Second, "the sidecar to be ready", func() (bool, string, error) {
		resp, err := http.Get(base + activity.ReadyzPath)
		if err != nil {
			return false, err.Error(), nil //nolint:nilerr // not listening yet: poll again
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status, nil
	})
	if code, body, _ := get(t, newRequest(t, http.MethodGet, base+"/lab")); code != http.StatusOK || body != "upstream /lab" {
		t.Errorf("GET /lab = %d %q", code, body)
	}
	<-up.seen
	ssh, err := net.Dial("tcp", cfg.SSHAddress)
	if err != nil {
		t.Fatal(err)
	}
	defer ssh.Close()
	if _, err := io.WriteString(ssh, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(ssh, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}

	_, body, _ := get(t, newRequest(t, http.MethodGet, base+activity.ReportPath))
	var r activity.Report
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	if r.LastRequest == nil || r.LastSSH == nil || r.SSHSessions != 1 || r.Since.IsZero() {
		t.Errorf("report = %s", body)
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Upstream = "127.0.0.1:8888"
	if err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "--upstream") {
		t.Errorf("Run = %v, want an error naming --upstream", err)
	}
	cfg = DefaultConfig()
	cfg.Address = freeAddr(t)
	ln, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg.SSHAddress = ""
	if err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("listening on %s", cfg.Address)) {
		t.Errorf("Run on a taken address = %v", err)
	}
}
