package proxy

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/accelstack/accelstack/pkg/activity"
)

// upstream is a fake workload: it answers plain requests with what it saw
// and switches websocket upgrades to a loop that reports each frame's
// opcode on frames and echoes data frames.
type upstream struct {
	srv    *httptest.Server
	seen   chan *http.Request
	frames chan byte
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{seen: make(chan *http.Request, 16), frames: make(chan byte, 16)}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.seen <- r.Clone(r.Context())
		if r.Header.Get("Upgrade") == "" {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "upstream "+r.URL.Path)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: "+r.Header.Get("Upgrade")+"\r\nConnection: Upgrade\r\n\r\n")
		for {
			op, payload, err := readFrame(brw.Reader)
			if err != nil {
				return
			}
			u.frames <- op
			if op < opClose {
				// Echo unmasked, as a server sends.
				_, _ = conn.Write(append([]byte{0x80 | op, byte(len(payload))}, payload...))
			}
		}
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// readFrame reads one client frame (payload < 126 bytes) and unmasks it.
func readFrame(r *bufio.Reader) (byte, []byte, error) {
	var hdr [6]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	payload := make([]byte, hdr[1]&0x7f)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	for i := range payload {
		payload[i] ^= hdr[2+i%4]
	}
	return hdr[0] & 0x0f, payload, nil
}

// sidecar serves a Handler in front of up with a settable clock.
func sidecar(t *testing.T, up *url.URL) (*httptest.Server, *Recorder, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	rec := NewRecorder(clock.now)
	srv := httptest.NewServer(NewHandler(rec, up, time.Second))
	t.Cleanup(srv.Close)
	return srv, rec, clock
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func get(t *testing.T, req *http.Request) (int, string, http.Header) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

func newRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestHandlerProxies(t *testing.T) {
	up := newUpstream(t)
	srv, rec, clock := sidecar(t, mustURL(t, up.srv.URL))
	t1 := clock.now().Add(time.Minute)
	clock.set(t1)

	req := newRequest(t, http.MethodGet, srv.URL+"/t9k/notebooks/projects/demo/name/nb/api/contents?type=directory&content=1")
	req.Host = "platform.example.com"
	req.Header.Set("X-Forwarded-Proto", "https")
	code, body, _ := get(t, req)
	if code != http.StatusOK || body != "upstream /t9k/notebooks/projects/demo/name/nb/api/contents" {
		t.Errorf("proxied GET = %d %q", code, body)
	}
	seen := <-up.seen
	if seen.Host != "platform.example.com" {
		t.Errorf("upstream saw Host %q, want the client's", seen.Host)
	}
	if seen.URL.RawQuery != "type=directory&content=1" {
		t.Errorf("upstream saw query %q", seen.URL.RawQuery)
	}
	if got := seen.Header.Get("X-Forwarded-Proto"); got != "https" {
		t.Errorf("upstream saw X-Forwarded-Proto %q, want the ingress's https", got)
	}
	if got := seen.Header.Get("X-Forwarded-For"); got == "" {
		t.Error("upstream saw no X-Forwarded-For")
	}
	if r := rec.Report(); r.LastRequest == nil || !r.LastRequest.Equal(t1) {
		t.Errorf("lastRequest = %v, want %v", r.LastRequest, t1)
	}

	// A probe is proxied, without its header, and is no activity.
	clock.set(t1.Add(time.Hour))
	req = newRequest(t, http.MethodGet, srv.URL+"/api/status")
	req.Header.Set(activity.ProbeHeader, "resource-keeper")
	if code, _, _ := get(t, req); code != http.StatusOK {
		t.Errorf("probe = %d", code)
	}
	if seen := <-up.seen; seen.Header.Get(activity.ProbeHeader) != "" {
		t.Error("the probe header reached the upstream")
	}
	if r := rec.Report(); !r.LastRequest.Equal(t1) {
		t.Errorf("lastRequest after a probe = %v, want %v", r.LastRequest, t1)
	}
}

func TestHandlerOwnPaths(t *testing.T) {
	up := newUpstream(t)
	srv, rec, clock := sidecar(t, mustURL(t, up.srv.URL))
	since := clock.now()

	code, body, header := get(t, newRequest(t, http.MethodGet, srv.URL+activity.ReportPath))
	if code != http.StatusOK || header.Get("Content-Type") != "application/json" {
		t.Fatalf("report = %d %s %q", code, header.Get("Content-Type"), body)
	}
	var got activity.Report
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(activity.Report{Since: since}, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if code, _, header := get(t, newRequest(t, http.MethodPost, srv.URL+activity.ReportPath)); code != http.StatusMethodNotAllowed || header.Get("Allow") == "" {
		t.Errorf("POST report = %d, Allow %q", code, header.Get("Allow"))
	}
	if code, body, _ := get(t, newRequest(t, http.MethodGet, srv.URL+activity.HealthzPath)); code != http.StatusOK || body != "ok" {
		t.Errorf("healthz = %d %q", code, body)
	}
	if code, _, _ := get(t, newRequest(t, http.MethodGet, srv.URL+activity.ReadyzPath)); code != http.StatusOK {
		t.Errorf("readyz with the upstream up = %d", code)
	}
	select {
	case r := <-up.seen:
		t.Errorf("the sidecar's own path %s reached the upstream", r.URL.Path)
	default:
	}
	if r := rec.Report(); r.LastRequest != nil {
		t.Errorf("the sidecar's own paths counted as activity: %v", r.LastRequest)
	}
}

func TestHandlerUpstreamDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	srv, _, _ := sidecar(t, mustURL(t, "http://"+addr))
	if code, _, _ := get(t, newRequest(t, http.MethodGet, srv.URL+"/lab")); code != http.StatusBadGateway {
		t.Errorf("GET with the upstream down = %d, want 502", code)
	}
	if code, _, _ := get(t, newRequest(t, http.MethodGet, srv.URL+activity.ReadyzPath)); code != http.StatusServiceUnavailable {
		t.Errorf("readyz with the upstream down = %d, want 503", code)
	}
}

// dialUpgrade opens an upgraded connection to the sidecar at addr.
func dialUpgrade(t *testing.T, addr, protocol string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = io.WriteString(conn, "GET /t9k/notebooks/projects/demo/name/nb/api/kernels/k1/channels HTTP/1.1\r\n"+
		"Host: platform.example.com\r\nConnection: Upgrade\r\nUpgrade: "+protocol+"\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade = %d", resp.StatusCode)
	}
	return conn, br
}

func TestHandlerWebsocket(t *testing.T) {
	up := newUpstream(t)
	srv, rec, clock := sidecar(t, mustURL(t, up.srv.URL))
	t0 := clock.now()
	t1 := t0.Add(time.Minute)
	clock.set(t1)
	conn, br := dialUpgrade(t, srv.Listener.Addr().String(), "websocket")
	<-up.seen
	if r := rec.Report(); !r.LastRequest.Equal(t1) {
		t.Errorf("lastRequest after the upgrade = %v, want %v", r.LastRequest, t1)
	}

	// An hour of keep-alives: pongs and pings from the client are no
	// activity.
	clock.set(t1.Add(time.Hour))
	for _, op := range []byte{opPong, 0x9, opPong} {
		if _, err := conn.Write(frame(op, []byte("ka"))); err != nil {
			t.Fatal(err)
		}
		if got := <-up.frames; got != op {
			t.Fatalf("upstream got opcode %#x, want %#x", got, op)
		}
	}
	if r := rec.Report(); !r.LastRequest.Equal(t1) {
		t.Errorf("lastRequest after keep-alives = %v, want %v", r.LastRequest, t1)
	}

	// A message is.
	t2 := t1.Add(2 * time.Hour)
	clock.set(t2)
	if _, err := conn.Write(frame(0x1, []byte(`{"header":{"msg_type":"execute_request"}}`))); err != nil {
		t.Fatal(err)
	}
	if got := <-up.frames; got != 0x1 {
		t.Fatalf("upstream got opcode %#x, want text", got)
	}
	// The echo comes back through the sidecar.
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		t.Fatal(err)
	}
	echo := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, echo); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(echo), "execute_request") {
		t.Errorf("echo = %q", echo)
	}
	if r := rec.Report(); !r.LastRequest.Equal(t2) {
		t.Errorf("lastRequest after a message = %v, want %v", r.LastRequest, t2)
	}
}

func TestHandlerWebsocketProbe(t *testing.T) {
	up := newUpstream(t)
	srv, rec, _ := sidecar(t, mustURL(t, up.srv.URL))
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /api/events/subscribe HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+activity.ProbeHeader+": 1\r\n\r\n")
	br := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v", err)
	}
	<-up.seen
	if _, err := conn.Write(frame(0x1, []byte("x"))); err != nil {
		t.Fatal(err)
	}
	<-up.frames
	if r := rec.Report(); r.LastRequest != nil {
		t.Errorf("a probe's websocket counted as activity: %v", r.LastRequest)
	}
}

func TestHandlerOtherUpgrade(t *testing.T) {
	up := newUpstream(t)
	srv, rec, clock := sidecar(t, mustURL(t, up.srv.URL))
	conn, _ := dialUpgrade(t, srv.Listener.Addr().String(), "custom")
	<-up.seen
	t1 := clock.now().Add(time.Hour)
	clock.set(t1)
	// Any byte of another protocol counts: a pong frame here is just bytes.
	if _, err := conn.Write(frame(opPong, nil)); err != nil {
		t.Fatal(err)
	}
	<-up.frames
	if r := rec.Report(); !r.LastRequest.Equal(t1) {
		t.Errorf("lastRequest after data on a custom upgrade = %v, want %v", r.LastRequest, t1)
	}
}

// TestFrameBuilder checks the tests' own frame builder against RFC 6455.
func TestFrameBuilder(t *testing.T) {
	f := frame(opBinary, make([]byte, 300))
	if f[1] != 0x80|126 || binary.BigEndian.Uint16(f[2:4]) != 300 || len(f) != 2+2+4+300 {
		t.Errorf("frame header % x", f[:8])
	}
}
