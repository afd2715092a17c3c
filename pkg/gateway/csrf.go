package gateway

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/accelstack/accelstack/pkg/gateway/login"
)

// csrfRefusal says why r, made with a login session's cookie, may not go
// on, or "" when it may. A request that changes state must carry the
// session's CSRF token, which only the gateway's own pages can read. An
// upgrade (exec, attach and port-forward go over a WebSocket, whose
// handshake is a GET that a browser sends with no header of the page's
// choosing) must come from a page of the gateway's own origin, which the
// browser states in Origin.
func csrfRefusal(r *http.Request, user *User) string {
	switch {
	case user.session == nil:
		return ""
	case r.Header.Get("Upgrade") != "":
		if sameOrigin(r) {
			return ""
		}
		return "an upgrade with a login session must come from the gateway's own pages: Origin " + strconv.Quote(r.Header.Get("Origin")) + " is not this gateway's"
	case r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions:
		return ""
	case login.ValidCSRF(r, user.session):
		return ""
	}
	return "a request with a login session that changes state must carry the session's " + login.CSRFHeader + " header"
}

// sameOrigin reports whether r's Origin is the origin r was sent to.
func sameOrigin(r *http.Request) bool {
	o, err := url.Parse(r.Header.Get("Origin"))
	if err != nil || o.Host == "" || o.Path != "" || !strings.EqualFold(o.Host, r.Host) {
		return false
	}
	if r.TLS != nil {
		return o.Scheme == "https"
	}
	return o.Scheme == "http" || o.Scheme == "https"
}
