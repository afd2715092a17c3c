package gateway

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/accelstack/accelstack/pkg/gateway/login"
)

func TestCSRFRefusal(t *testing.T) {
	browser := &User{Name: "erin", session: &login.Session{User: "erin", CSRF: "token"}}
	key := &User{Name: "erin", KeyID: "k1"}
	exec := "/t9k/kubernetes/api/v1/namespaces/team-a/pods/p/exec?command=sh"
	for _, tc := range []struct {
		name    string
		user    *User
		method  string
		headers map[string]string
		tls     bool
		allowed bool
	}{
		{"a read", browser, http.MethodGet, nil, true, true},
		{"a change without the token", browser, http.MethodPost, nil, true, false},
		{"a change with another token", browser, http.MethodPost, map[string]string{login.CSRFHeader: "other"}, true, false},
		{"a change with the token", browser, http.MethodDelete, map[string]string{login.CSRFHeader: "token"}, true, true},
		{"a WebSocket from the gateway's page", browser, http.MethodGet, map[string]string{"Upgrade": "websocket", "Origin": "https://gw.example"}, true, true},
		// A page elsewhere opens a WebSocket to the gateway: the browser
		// sends the session's cookie along (a GET), and states its origin.
		{"a WebSocket from another site", browser, http.MethodGet, map[string]string{"Upgrade": "websocket", "Origin": "https://evil.example"}, true, false},
		{"a WebSocket without Origin", browser, http.MethodGet, map[string]string{"Upgrade": "websocket"}, true, false},
		{"a WebSocket from the plain-HTTP origin of a TLS gateway", browser, http.MethodGet, map[string]string{"Upgrade": "websocket", "Origin": "http://gw.example"}, true, false},
		{"a WebSocket from a sub-path origin", browser, http.MethodGet, map[string]string{"Upgrade": "websocket", "Origin": "https://gw.example/x"}, true, false},
		{"a WebSocket behind a TLS-terminating proxy", browser, http.MethodGet, map[string]string{"Upgrade": "websocket", "Origin": "https://gw.example"}, false, true},
		// Credentials a page cannot make a browser send on its own.
		{"an API key's upgrade from anywhere", key, http.MethodGet, map[string]string{"Upgrade": "websocket", "Origin": "https://evil.example"}, true, true},
		{"an API key's change", key, http.MethodPost, nil, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "https://gw.example"+exec, nil)
			if !tc.tls {
				r.TLS = nil
			} else if r.TLS == nil {
				r.TLS = &tls.ConnectionState{}
			}
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			why := csrfRefusal(r, tc.user)
			if (why == "") != tc.allowed {
				t.Errorf("refusal %q, want allowed %v", why, tc.allowed)
			}
		})
	}
}
