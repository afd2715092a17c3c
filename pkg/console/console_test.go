package console

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func newHandler(t *testing.T) *Handler {
	t.Helper()
	h, err := NewHandler(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func serve(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// TestPage: every path of the console is its page, which carries the
// configuration and an import map that the Content-Security-Policy lets
// run by its digest, and no other inline script.
func TestPage(t *testing.T) {
	h := newHandler(t)
	for _, p := range []string{BuildPrefix, BuildPrefix + "projects/team-a/notebooks/lab?tab=yaml"} {
		w := serve(h, http.MethodGet, p)
		body := w.Body.String()
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s: %d %s", p, w.Code, w.Header().Get("Content-Type"))
		}
		if !strings.Contains(body, `<base href="/t9k/build-console/">`) || !strings.Contains(body, `"kubernetesPath":"/t9k/kubernetes"`) {
			t.Errorf("GET %s: the page lacks its base or configuration:\n%s", p, body)
		}
		imports, _ := json.Marshal(importMap(h.static))
		sum := sha256.Sum256(imports)
		csp := w.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self' 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", p, csp)
		}
		if !strings.Contains(body, `<script type="importmap">`+string(imports)+`</script>`) {
			t.Errorf("GET %s: the import map is not the one the policy allows:\n%s", p, body)
		}
	}
}

func TestAssets(t *testing.T) {
	h := newHandler(t)
	app := BuildPrefix + h.static + "app.js"
	w := serve(h, http.MethodGet, app)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/javascript; charset=utf-8" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("app.js: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	// The path names the assets' version: a browser need not ask again.
	if cc := w.Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("app.js: Cache-Control %q, want immutable", cc)
	}
	etag := w.Header().Get("ETag")
	if etag == "" {
		t.Fatal("app.js has no ETag")
	}
	if w := serve(h, http.MethodGet, app, "If-None-Match", etag); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Errorf("app.js with its ETag: %d, %d bytes; want 304", w.Code, w.Body.Len())
	}
	// Every package the import map names, and the stylesheets.
	paths := []string{h.static + "vendor/xterm.css", h.static + "kinds.json", h.static + "console.css"}
	for _, target := range importMap(h.static)["imports"] {
		paths = append(paths, strings.TrimPrefix(target, "./"))
	}
	for _, p := range paths {
		if w := serve(h, http.MethodGet, BuildPrefix+p); w.Code != http.StatusOK || w.Body.Len() == 0 {
			t.Errorf("%s: %d", p, w.Code)
		}
	}
}

func TestRefused(t *testing.T) {
	h := newHandler(t)
	for _, tc := range []struct {
		method, target string
		code           int
	}{
		{http.MethodGet, BuildPrefix + h.static + "missing.js", http.StatusNotFound},
		{http.MethodGet, BuildPrefix + h.static + "../index.html", http.StatusNotFound},
		{http.MethodGet, BuildPrefix + h.static + "vendor//preact.mjs", http.StatusNotFound},
		{http.MethodGet, BuildPrefix + h.static + "index.html", http.StatusNotFound},
		// Without the version, or with another one.
		{http.MethodGet, BuildPrefix + "static/app.js", http.StatusNotFound},
		{http.MethodGet, BuildPrefix + "static/0123456789abcdef/app.js", http.StatusNotFound},
		{http.MethodGet, "/t9k/deploy-console/", http.StatusNotFound},
		{http.MethodPost, BuildPrefix, http.StatusMethodNotAllowed},
		{http.MethodGet, strings.TrimSuffix(BuildPrefix, "/"), http.StatusMovedPermanently},
	} {
		if w := serve(h, tc.method, tc.target); w.Code != tc.code {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.target, w.Code, tc.code)
		}
	}
	if _, err := NewHandler(Config{Prefix: "/no-slash"}); err == nil {
		t.Error("a prefix without its slash was accepted")
	}
}
