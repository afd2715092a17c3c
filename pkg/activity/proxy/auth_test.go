package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/accelstack/accelstack/pkg/activity"
)

// testToken is the access token of the guarded sidecars.
const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// remotePeer is a client outside the pod: a pod of another namespace.
const remotePeer = "10.244.1.7:41234"

// guarded serves a Handler requiring testToken in front of up; requests
// seem to come from peer ("" keeps the test client's loopback address).
func guarded(t *testing.T, up *upstream, peer string) (*httptest.Server, *Recorder) {
	t.Helper()
	rec := NewRecorder(time.Now)
	h := NewHandler(rec, mustURL(t, up.srv.URL), time.Second).WithAccessToken(testToken)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if peer != "" {
			r.RemoteAddr = peer
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// noRedirects is a client that returns redirects rather than following
// them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// notCalled fails when the upstream saw a request.
func notCalled(t *testing.T, up *upstream) {
	t.Helper()
	select {
	case r := <-up.seen:
		t.Errorf("the upstream was called: %s %s", r.Method, r.URL)
	default:
	}
}

func TestAccessRefused(t *testing.T) {
	up := newUpstream(t)
	srv, rec := guarded(t, up, remotePeer)
	for _, tc := range []struct {
		name   string
		path   string
		header http.Header
	}{
		{"no token", "/lab", nil},
		{"wrong bearer", "/lab", http.Header{"Authorization": {"Bearer " + strings.Repeat("0", 64)}}},
		{"another scheme", "/lab", http.Header{"Authorization": {"token " + testToken}}},
		{"wrong cookie", "/lab", http.Header{"Cookie": {activity.AccessCookie + "=x"}}},
		{"wrong query", "/lab?" + activity.AccessQueryParam + "=x", nil},
		{"token prefix", "/lab", http.Header{"Authorization": {"Bearer " + testToken[:32]}}},
		{"probe header", "/api/status", http.Header{activity.ProbeHeader: {"1"}}},
		{"forwarded from loopback", "/lab", http.Header{"X-Forwarded-For": {"127.0.0.1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(t, http.MethodGet, srv.URL+tc.path)
			for k, vs := range tc.header {
				req.Header[k] = vs
			}
			code, body, _ := get(t, req)
			if code != http.StatusUnauthorized || !strings.Contains(body, "unauthorized") {
				t.Errorf("= %d %q, want 401", code, body)
			}
			if strings.Contains(body, testToken) {
				t.Error("the answer holds the token")
			}
			notCalled(t, up)
		})
	}
	if r := rec.Report(); r.LastRequest != nil {
		t.Errorf("refused requests counted as activity: %v", r.LastRequest)
	}
}

func TestAccessBearer(t *testing.T) {
	up := newUpstream(t)
	srv, _ := guarded(t, up, remotePeer)
	req := newRequest(t, http.MethodGet, srv.URL+"/lab")
	req.Header.Set("Authorization", "Bearer "+testToken)
	if code, body, _ := get(t, req); code != http.StatusOK || body != "upstream /lab" {
		t.Fatalf("= %d %q", code, body)
	}
	if seen := <-up.seen; seen.Header.Get("Authorization") != "" {
		t.Errorf("the upstream saw Authorization %q", seen.Header.Get("Authorization"))
	}
}

func TestAccessCookie(t *testing.T) {
	up := newUpstream(t)
	srv, _ := guarded(t, up, remotePeer)
	req := newRequest(t, http.MethodGet, srv.URL+"/lab")
	req.Header.Set("Cookie", "_xsrf=abc; "+activity.AccessCookie+"="+testToken+"; username-x=\"2|1:0\"")
	// A Jupyter token travels on with the cookie.
	req.Header.Set("Authorization", "token jupyter-token")
	if code, body, _ := get(t, req); code != http.StatusOK || body != "upstream /lab" {
		t.Fatalf("= %d %q", code, body)
	}
	seen := <-up.seen
	if got := seen.Header.Values("Cookie"); len(got) != 1 || got[0] != "_xsrf=abc; username-x=\"2|1:0\"" {
		t.Errorf("the upstream saw cookies %q, want the user's own only", got)
	}
	if got := seen.Header.Get("Authorization"); got != "token jupyter-token" {
		t.Errorf("the upstream saw Authorization %q, want the Jupyter token", got)
	}

	// The access cookie alone: no Cookie header upstream.
	req = newRequest(t, http.MethodGet, srv.URL+"/lab")
	req.AddCookie(&http.Cookie{Name: activity.AccessCookie, Value: testToken})
	if code, _, _ := get(t, req); code != http.StatusOK {
		t.Fatalf("= %d", code)
	}
	if seen := <-up.seen; seen.Header.Get("Cookie") != "" {
		t.Errorf("the upstream saw Cookie %q", seen.Header.Get("Cookie"))
	}
}

func TestAccessQuery(t *testing.T) {
	up := newUpstream(t)
	srv, _ := guarded(t, up, remotePeer)
	resp, err := noRedirects.Get(srv.URL + "/explorer/ns/ex/code-server/?folder=%2Fdata&" + activity.AccessQueryParam + "=" + testToken + "&b=2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("= %d, want a redirect", resp.StatusCode)
	}
	if got := resp.Header.Get("Location"); got != "/explorer/ns/ex/code-server/?folder=%2Fdata&b=2" {
		t.Errorf("Location %q", got)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", cookies)
	}
	c := cookies[0]
	if c.Name != activity.AccessCookie || c.Value != testToken || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" {
		t.Errorf("cookie %+v, want %s HttpOnly SameSite=Lax Path=/", c, activity.AccessCookie)
	}
	notCalled(t, up)

	// A path of two slashes stays on the host.
	resp, err = noRedirects.Get(srv.URL + "//evil.example.com/?" + activity.AccessQueryParam + "=" + testToken)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Location"); got != "/.//evil.example.com/" {
		t.Errorf("Location %q, want a path on the same host", got)
	}

	// A POST is proxied, without the parameter.
	resp, err = http.Post(srv.URL+"/api/x?a=1&"+activity.AccessQueryParam+"="+testToken, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST = %d", resp.StatusCode)
	}
	if seen := <-up.seen; seen.URL.RawQuery != "a=1" {
		t.Errorf("the upstream saw query %q", seen.URL.RawQuery)
	}
}

// TestAccessLoopback: kubectl port-forward and the pod's containers reach
// the workload without the token.
func TestAccessLoopback(t *testing.T) {
	up := newUpstream(t)
	for _, peer := range []string{"", "127.0.0.1:5555", "[::1]:5555"} {
		srv, _ := guarded(t, up, peer)
		if code, body, _ := get(t, newRequest(t, http.MethodGet, srv.URL+"/lab")); code != http.StatusOK || body != "upstream /lab" {
			t.Errorf("from %q = %d %q", peer, code, body)
		}
		<-up.seen
	}
}

// TestAccessOwnPaths: probes and the report need no token.
func TestAccessOwnPaths(t *testing.T) {
	up := newUpstream(t)
	srv, _ := guarded(t, up, remotePeer)
	for _, p := range []string{activity.HealthzPath, activity.ReadyzPath, activity.ReportPath} {
		if code, _, _ := get(t, newRequest(t, http.MethodGet, srv.URL+p)); code != http.StatusOK {
			t.Errorf("%s = %d", p, code)
		}
	}
	notCalled(t, up)
}

// upgradeStatus opens a websocket to the sidecar at addr with extra header
// lines and returns the answer's status.
func upgradeStatus(t *testing.T, addr, extra string) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = io.WriteString(conn, "GET /api/kernels/k1/channels HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"+extra+"\r\n")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestAccessWebsocket(t *testing.T) {
	up := newUpstream(t)
	srv, _ := guarded(t, up, remotePeer)
	addr := srv.Listener.Addr().String()
	if code := upgradeStatus(t, addr, ""); code != http.StatusUnauthorized {
		t.Errorf("upgrade without the token = %d, want 401", code)
	}
	notCalled(t, up)
	if code := upgradeStatus(t, addr, "Cookie: "+activity.AccessCookie+"="+testToken+"\r\n"); code != http.StatusSwitchingProtocols {
		t.Errorf("upgrade with the cookie = %d, want 101", code)
	}
	if seen := <-up.seen; seen.Header.Get("Cookie") != "" {
		t.Errorf("the upstream saw Cookie %q", seen.Header.Get("Cookie"))
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "token")
	if err := os.WriteFile(name, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadToken(name); err != nil || got != testToken {
		t.Errorf("ReadToken = %q, %v", got, err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadToken(empty); err == nil {
		t.Error("an empty token file was accepted")
	}
	cfg := DefaultConfig()
	cfg.Address, cfg.SSHAddress = freeAddr(t), ""
	cfg.AccessTokenFile = filepath.Join(dir, "missing")
	if err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "access token") {
		t.Errorf("Run without the token file = %v", err)
	}
}
