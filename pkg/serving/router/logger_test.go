package router

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestLoggerSinkStatus: an event the sink answers with 2xx is sent, one it
// refuses is failed; the connection to the sink is kept across events.
func TestLoggerSinkStatus(t *testing.T) {
	a := upstream(t, "a")
	for _, tc := range []struct {
		name                 string
		status               int
		wantSent, wantFailed int64
	}{
		{"accepted", http.StatusAccepted, 2, 0},
		{"no content", http.StatusNoContent, 2, 0},
		{"refused", http.StatusInternalServerError, 0, 2},
		{"not found", http.StatusNotFound, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, "answer")
			}))
			conns := startCounting(t, s)
			opts := DefaultOptions()
			opts.Workers = 1
			r := newRouter(t, &Config{Name: "mls", Releases: []Target{
				{Name: "a", URL: a.URL, Weight: 100, Logger: &Logger{URLs: []string{s.URL}}},
			}}, opts)
			do(t, r, "mls", "/", "x", nil)
			deadline := time.Now().Add(10 * time.Second)
			for st := r.Stats(); st.Sent+st.Failed < 2 && time.Now().Before(deadline); st = r.Stats() {
				time.Sleep(10 * time.Millisecond)
			}
			if st := r.Stats(); st.Sent != tc.wantSent || st.Failed != tc.wantFailed {
				t.Errorf("stats %+v, want %d sent and %d failed", st, tc.wantSent, tc.wantFailed)
			}
			if n := conns.opened.Load(); n != 1 {
				t.Errorf("%d connections to the sink for 2 events, want 1", n)
			}
		})
	}
}
