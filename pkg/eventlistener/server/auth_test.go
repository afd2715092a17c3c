package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeSecret writes secret to a file of its own and returns its path.
func writeSecret(t *testing.T, secret string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// signedPost sends body to h with header and returns the reply's status.
func signedPost(h http.Handler, header http.Header, body string) int {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	_, _ = io.Copy(io.Discard, w.Result().Body)
	return w.Code
}

func TestListenerVerifiesSecret(t *testing.T) {
	const secret, body = "It's a Secret to Everybody", `{"ref": "refs/heads/main"}`
	cfg := listenerConfig("http://trigger")
	cfg.SecretFile = writeSecret(t, secret+"\n")
	sender := newFakeSender()
	l := newTestListener(t, cfg, sender)
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	tests := []struct {
		name     string
		header   http.Header
		body     string
		wantCode int
	}{
		{"GitHub signature", h(GitHubSignatureHeader, Sign([]byte(secret), []byte(body))), body, http.StatusOK},
		{"GitLab token", h(GitLabTokenHeader, secret), body, http.StatusOK},
		{"nothing", h(), body, http.StatusUnauthorized},
		{"signature of another body", h(GitHubSignatureHeader, Sign([]byte(secret), []byte(`{}`))), body, http.StatusUnauthorized},
		{"signature with another secret", h(GitHubSignatureHeader, Sign([]byte("guess"), []byte(body))), body, http.StatusUnauthorized},
		{"signature not hex", h(GitHubSignatureHeader, "sha256=zz"), body, http.StatusUnauthorized},
		{"SHA-1 signature", h(GitHubSignatureHeader, "sha1=0123"), body, http.StatusUnauthorized},
		{"wrong token", h(GitLabTokenHeader, secret+"x"), body, http.StatusUnauthorized},
		{"bad signature beside a good token", h(GitHubSignatureHeader, "sha256=00", GitLabTokenHeader, secret), body, http.StatusUnauthorized},
	}
	accepted := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := signedPost(l, tt.header, tt.body); code != tt.wantCode {
				t.Errorf("reply %d, want %d", code, tt.wantCode)
			}
		})
		if tt.wantCode == http.StatusOK {
			accepted++
		}
	}
	// Only the verified requests became events, and the GitLab token is
	// not in them.
	got := sender.wait(t, accepted)
	if len(got) != accepted {
		t.Fatalf("%d events sent, want %d", len(got), accepted)
	}
	for _, s := range got {
		var doc struct{ Header map[string]string }
		if err := json.Unmarshal(s.event.Data(), &doc); err != nil {
			t.Fatal(err)
		}
		for k, v := range doc.Header {
			if strings.Contains(v, secret) {
				t.Errorf("the event's header %s holds the secret", k)
			}
		}
	}
}

func TestListenerWithoutSecretTakesAll(t *testing.T) {
	l := newTestListener(t, listenerConfig(), newFakeSender())
	if code := signedPost(l, http.Header{}, `{}`); code != http.StatusOK {
		t.Errorf("a listener without a secret replied %d to an unsigned request", code)
	}
}

func TestVerifierFile(t *testing.T) {
	if _, err := NewVerifier(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing secret file was taken")
	}
	if _, err := NewVerifier(writeSecret(t, "\n")); err == nil {
		t.Error("an empty secret was taken")
	}
	// A rotated secret is taken once the reload interval passed; a file
	// that disappears keeps the last secret.
	path := writeSecret(t, "old")
	v, err := NewVerifier(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	v.now = func() time.Time { return now }
	if err := os.WriteFile(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	token := func(s string) http.Header { return http.Header{GitLabTokenHeader: []string{s}} }
	if err := v.Verify(token("old"), nil); err != nil {
		t.Errorf("the secret changed before the reload interval: %v", err)
	}
	now = now.Add(secretReloadInterval)
	if err := v.Verify(token("new"), nil); err != nil {
		t.Errorf("the rotated secret is refused: %v", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	now = now.Add(secretReloadInterval)
	if err := v.Verify(token("new"), nil); err != nil {
		t.Errorf("a removed file lost the secret: %v", err)
	}
	if err := v.Verify(token("old"), nil); err == nil || strings.Contains(err.Error(), "new") {
		t.Errorf("the old secret: %v, want an error that does not hold the secret", err)
	}
}
