package proxy

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"

	"github.com/accelstack/accelstack/pkg/activity"
)

// maxTokenFile bounds what ReadToken reads of a token file.
const maxTokenFile = 4 << 10

// ReadToken returns the access token in the file name, without the
// surrounding white space; an empty token is an error.
func ReadToken(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", fmt.Errorf("reading the access token: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile))
	if err != nil {
		return "", fmt.Errorf("reading the access token: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", errors.New("the access token file " + name + " is empty")
	}
	return token, nil
}

// verdict is what the access check decided of a request.
type verdict int

const (
	// admit: proxy the request (its credential removed).
	admit verdict = iota
	// deny: answer 401.
	deny
	// redirect: answer a redirect that sets the cookie (the token came as
	// a query parameter of a GET).
	redirect
)

// authorize checks r against token and returns the verdict and the
// request to proxy: r, or a copy without the credential that matched.
// A request matches when one of the Authorization bearer token, the
// cookie activity.AccessCookie and the query parameter
// activity.AccessQueryParam is the token; a request that carries none
// that matches is admitted only from the pod's loopback. Credentials that
// do not match (such as a Jupyter token sent as a bearer token along with
// the cookie) are passed on.
func authorize(r *http.Request, token string) (verdict, *http.Request) {
	bearer, cookie, query := matchBearer(r, token), matchCookie(r, token), matchQuery(r, token)
	if !bearer && !cookie && !query {
		if fromLoopback(r) {
			return admit, r
		}
		return deny, r
	}
	out := r.Clone(r.Context())
	if bearer {
		out.Header.Del("Authorization")
	}
	if cookie {
		stripCookie(out.Header)
	}
	if query {
		out.URL.RawQuery = stripQuery(out.URL.RawQuery)
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && upgrade(r.Header) == "" {
			return redirect, out
		}
	}
	return admit, out
}

// equal compares a credential with the token in constant time.
func equal(got, token string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// matchBearer reports whether r's Authorization is "Bearer <token>".
func matchBearer(r *http.Request, token string) bool {
	vs := r.Header.Values("Authorization")
	if len(vs) != 1 {
		return false
	}
	scheme, cred, ok := strings.Cut(strings.TrimSpace(vs[0]), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && equal(strings.TrimSpace(cred), token)
}

// matchCookie reports whether a cookie activity.AccessCookie of r is the
// token.
func matchCookie(r *http.Request, token string) bool {
	ok := false
	for _, c := range r.CookiesNamed(activity.AccessCookie) {
		if equal(c.Value, token) {
			ok = true
		}
	}
	return ok
}

// matchQuery reports whether r's query parameter
// activity.AccessQueryParam is the token.
func matchQuery(r *http.Request, token string) bool {
	vs := r.URL.Query()[activity.AccessQueryParam]
	return len(vs) == 1 && equal(vs[0], token)
}

// stripCookie removes the cookies activity.AccessCookie from the Cookie
// headers of h, keeping the others as they were sent.
func stripCookie(h http.Header) {
	var kept []string
	for _, line := range h.Values("Cookie") {
		var parts []string
		for part := range strings.SplitSeq(line, ";") {
			name, _, _ := strings.Cut(strings.TrimSpace(part), "=")
			if name != activity.AccessCookie && strings.TrimSpace(part) != "" {
				parts = append(parts, strings.TrimSpace(part))
			}
		}
		if len(parts) > 0 {
			kept = append(kept, strings.Join(parts, "; "))
		}
	}
	h.Del("Cookie")
	if len(kept) > 0 {
		h.Set("Cookie", strings.Join(kept, "; "))
	}
}

// stripQuery removes the parameters activity.AccessQueryParam from a raw
// query, keeping the others as they were sent.
func stripQuery(raw string) string {
	var kept []string
	for part := range strings.SplitSeq(raw, "&") {
		name, _, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); part == "" || (err == nil && n == activity.AccessQueryParam) {
			continue
		}
		kept = append(kept, part)
	}
	return strings.Join(kept, "&")
}

// fromLoopback reports whether r's TCP peer is the pod's loopback: kubectl
// port-forward, which the API server authorizes, or another container of
// the pod.
func fromLoopback(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// unauthorized answers 401 without calling the workload.
func unauthorized(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("WWW-Authenticate", `Bearer realm="workload"`)
	http.Error(w, "unauthorized: this workload needs its access token (see its access Secret) or kubectl port-forward", http.StatusUnauthorized)
}

// setCookieRedirect answers a GET that carried the token as a query
// parameter: a redirect to the same path and query without it, setting
// the cookie activity.AccessCookie.
func setCookieRedirect(w http.ResponseWriter, r, out *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{
		Name:     activity.AccessCookie,
		Value:    token,
		Path:     "/",
		HttpOnly: true,
		Secure:   r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"),
		SameSite: http.SameSiteLaxMode,
	})
	loc := out.URL.EscapedPath()
	switch {
	case !strings.HasPrefix(loc, "/"):
		loc = "/"
	case strings.HasPrefix(loc, "//"):
		// A path, never a reference to another host: "/." resolves away.
		loc = "/." + loc
	}
	if out.URL.RawQuery != "" {
		loc += "?" + out.URL.RawQuery
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", loc)
	w.WriteHeader(http.StatusFound)
}
