package gateway

import (
	"net/http"
	"testing"

	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
	"github.com/accelstack/accelstack/pkg/members"
)

// TestGatewayConsole: a caller with a credential reaches the console
// server at the console's path, without the credential; one without is
// refused before anything reaches it.
func TestGatewayConsole(t *testing.T) {
	e := newTestEnv(t)
	const path = gatewayapi.BuildConsolePath + "projects/demo/notebooks"
	code, body := e.do(t, "GET", "ai.example.com", path, aliceToken, nil, http.Header{"Cookie": {"t9k-session=sealed; theme=dark"}})
	if code != http.StatusOK || body != "upstream "+path {
		t.Fatalf("got %d %q", code, body)
	}
	reqs := e.up.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests reached the console", len(reqs))
	}
	if r := reqs[0]; r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" || r.Host != "ai.example.com" {
		t.Errorf("the console got Authorization %q, Cookie %q, Host %q", r.Header.Get("Authorization"), r.Header.Get("Cookie"), r.Host)
	}
	if got := e.up.addresses(); len(got) != 1 || got[0] != "console.accelstack-system.svc:8080" {
		t.Errorf("dialed %v, want the console server", got)
	}
	for _, cred := range []string{"", aliceToken + "x"} {
		if code, _ := e.do(t, "GET", "", path, cred, nil, nil); code != http.StatusUnauthorized {
			t.Errorf("credential %q: %d, want 401", cred, code)
		}
	}
	if n := len(e.up.requests()); n != 1 {
		t.Errorf("%d requests reached the console, want the one authenticated", n)
	}
}

func TestMembership(t *testing.T) {
	ms := []members.Member{
		{Kind: "User", Name: "alice", Scopes: []members.Scope{members.Deploy}},
		{Kind: "Group", Name: "ml", Scopes: []members.Scope{members.Build, members.Deploy}, Admin: true},
		{Kind: "Group", Name: "other", Scopes: []members.Scope{members.Build}},
		{Kind: "User", Name: "bob", Scopes: []members.Scope{members.Build}, Admin: true},
	}
	for _, tc := range []struct {
		user   User
		found  bool
		scopes []string
		admin  bool
	}{
		{User{Name: "alice"}, true, []string{"deploy"}, false},
		{User{Name: "alice", Groups: []string{"ml"}}, true, []string{"build", "deploy"}, true},
		{User{Name: "carol", Groups: []string{"other"}}, true, []string{"build"}, false},
		{User{Name: "ml"}, false, []string{}, false},
		{User{Name: "dave", Groups: []string{"alice"}}, false, []string{}, false},
	} {
		p, found := membership(ms, &tc.user)
		if found != tc.found || p.Admin != tc.admin || len(p.Scopes) != len(tc.scopes) {
			t.Errorf("%+v: %+v %v, want scopes %v admin %v found %v", tc.user, p, found, tc.scopes, tc.admin, tc.found)
			continue
		}
		for i := range p.Scopes {
			if p.Scopes[i] != tc.scopes[i] {
				t.Errorf("%+v: scopes %v, want %v", tc.user, p.Scopes, tc.scopes)
			}
		}
	}
}
