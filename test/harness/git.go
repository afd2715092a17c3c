package harness

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
)

// GitHTTP serves the bare repositories below a directory over Git's smart
// HTTP protocol (git http-backend behind net/http/cgi), pushes included.
type GitHTTP struct {
	// URL is the base URL; a repository dir/r.git is URL + "/r.git".
	URL string
}

// StartGitHTTP serves root; with token set, every request must carry Basic
// credentials whose user or password is token.
func StartGitHTTP(t testing.TB, root, token string) *GitHTTP {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is not installed: %v", err)
	}
	g := &GitHTTP{}
	backend := &cgi.Handler{
		Path: gitBin,
		Args: []string{"http-backend"},
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=test"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.User != nil || strings.Contains(r.URL.String(), token) && token != "" {
			http.Error(w, "credentials in the URL", http.StatusBadRequest)
			return
		}
		user, pass, ok := r.BasicAuth()
		if token != "" && (!ok || (user != token && pass != token)) {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}
