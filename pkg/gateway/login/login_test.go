package login

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func testSealer(t *testing.T) *sealer {
	t.Helper()
	s, err := newSealer([]byte(strings.Repeat("k", MinKeyBytes)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealerRoundTripAndTampering(t *testing.T) {
	s := testSealer(t)
	in := Session{User: "alice", Groups: []string{"ml-team"}, Expires: time.Unix(2000000000, 0).UTC(), CSRF: "c"}
	v, err := s.seal(SessionCookie, in)
	if err != nil {
		t.Fatal(err)
	}
	var out Session
	if err := s.open(SessionCookie, v, &out); err != nil || out.User != "alice" || len(out.Groups) != 1 || !out.Expires.Equal(in.Expires) {
		t.Fatalf("open = %+v, %v", out, err)
	}
	if strings.Contains(v, "alice") {
		t.Errorf("the sealed cookie shows the user: %s", v)
	}
	if err := s.open(FlowCookie, v, &out); err == nil {
		t.Error("a session cookie opened as the flow cookie")
	}
	other, _ := newSealer([]byte(strings.Repeat("x", MinKeyBytes)))
	if err := other.open(SessionCookie, v, &out); err == nil {
		t.Error("a cookie opened under another key")
	}
	b := []byte(v)
	b[len(b)/2] ^= 1
	if err := s.open(SessionCookie, string(b), &out); err == nil {
		t.Error("a changed cookie opened")
	}
	if _, err := newSealer([]byte("short")); err == nil {
		t.Error("a 5-byte key was accepted")
	}
}

func TestSealerRefusesOversizedCookies(t *testing.T) {
	s := testSealer(t)
	if _, err := s.seal(SessionCookie, Session{User: strings.Repeat("a", 4000)}); err == nil {
		t.Error("a cookie over what browsers keep was sealed")
	}
}

func TestSession(t *testing.T) {
	l := &Login{seal: testSealer(t)}
	req := func(s Session) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		v, err := l.seal.seal(SessionCookie, s)
		if err != nil {
			t.Fatal(err)
		}
		r.AddCookie(&http.Cookie{Name: SessionCookie, Value: v})
		return r
	}
	if s, ok := l.Session(req(Session{User: "alice", Expires: time.Now().Add(time.Hour), CSRF: "tok"})); !ok || s.User != "alice" {
		t.Fatalf("a valid session = %v, %v", s, ok)
	}
	if _, ok := l.Session(req(Session{User: "alice", Expires: time.Now().Add(-time.Second)})); ok {
		t.Error("an expired session was accepted")
	}
	if _, ok := l.Session(req(Session{Expires: time.Now().Add(time.Hour)})); ok {
		t.Error("a session without a user was accepted")
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(&http.Cookie{Name: SessionCookie, Value: "forged"})
	if _, ok := l.Session(r); ok {
		t.Error("a forged cookie was accepted")
	}
}

func TestValidCSRF(t *testing.T) {
	s := &Session{CSRF: "tok"}
	for _, c := range []struct {
		header string
		want   bool
	}{{"tok", true}, {"", false}, {"other", false}, {"tok ", false}} {
		r := httptest.NewRequest("POST", "/", nil)
		if c.header != "" {
			r.Header.Set(CSRFHeader, c.header)
		}
		if got := ValidCSRF(r, s); got != c.want {
			t.Errorf("ValidCSRF(%q) = %v, want %v", c.header, got, c.want)
		}
	}
	if ValidCSRF(httptest.NewRequest("POST", "/", nil), &Session{}) {
		t.Error("an empty header matched a session without a token")
	}
}

func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/t9k/notebooks/projects/demo/name/nb/lab?x=1": "/t9k/notebooks/projects/demo/name/nb/lab?x=1",
		"":                              "/",
		"https://evil.example/":         "/",
		"//evil.example/":               "/",
		"/\\evil.example/":              "/",
		"/a\\b":                         "/",
		"javascript:alert(1)":           "/",
		"/ok\r\nSet-Cookie: x=1":        "/",
		"relative/path":                 "/",
		"/" + strings.Repeat("a", 3000): "/",
	} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWantsPage(t *testing.T) {
	page := httptest.NewRequest("GET", "/", nil)
	page.Header.Set("Accept", "text/html,application/xhtml+xml")
	api := httptest.NewRequest("GET", "/", nil)
	api.Header.Set("Accept", "application/json")
	post := httptest.NewRequest("POST", "/", nil)
	post.Header.Set("Accept", "text/html")
	bearer := httptest.NewRequest("GET", "/", nil)
	bearer.Header.Set("Accept", "text/html")
	bearer.Header.Set("Authorization", "Bearer x")
	for name, c := range map[string]struct {
		r    *http.Request
		want bool
	}{"page": {page, true}, "api": {api, false}, "post": {post, false}, "bearer": {bearer, false}} {
		if got := WantsPage(c.r); got != c.want {
			t.Errorf("%s: WantsPage = %v, want %v", name, got, c.want)
		}
	}
}

func TestThrottle(t *testing.T) {
	th := newThrottle(2, time.Minute, 2)
	now := time.Unix(0, 0)
	th.failed("alice", now)
	if !th.allowed("alice", now) {
		t.Fatal("one failure of two throttled")
	}
	th.failed("alice", now.Add(time.Second))
	if th.allowed("alice", now.Add(2*time.Second)) {
		t.Error("two failures of two not throttled")
	}
	if !th.allowed("bob", now) {
		t.Error("another user throttled")
	}
	if !th.allowed("alice", now.Add(time.Minute+time.Second)) {
		t.Error("still throttled after the window")
	}
	th.failed("alice", now)
	th.failed("alice", now)
	th.succeeded("alice")
	if !th.allowed("alice", now) {
		t.Error("throttled after a success")
	}
	th.failed("a", now)
	th.failed("b", now)
	th.failed("c", now) // full: not remembered
	if !th.allowed("c", now) || len(th.fails) != 2 {
		t.Errorf("a full throttle remembered %d names", len(th.fails))
	}
	th.failed("d", now.Add(2*time.Minute)) // the quiet ones are forgotten
	if _, ok := th.fails["d"]; !ok {
		t.Error("a full throttle did not forget quiet names")
	}
}

func TestCleanGroups(t *testing.T) {
	got := cleanGroups([]string{"ml", "system:masters", "ml", "a b", "", "admins", "bad\x00"})
	if strings.Join(got, ",") != "admins,ml" {
		t.Errorf("cleanGroups = %q", got)
	}
}
