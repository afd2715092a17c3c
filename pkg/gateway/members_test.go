package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/members"
)

// membersURL is the members API of the project demo, or of one member.
func membersURL(member ...string) string {
	return strings.Join(append([]string{ProjectsPath, "demo", "members"}, member...), "/")
}

// listMembers returns the members of demo as user sees them.
func (e *testEnv) listMembers(t *testing.T, credential string) []members.Member {
	t.Helper()
	code, body := e.do(t, http.MethodGet, "", membersURL(), credential, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("listing members: %d %s", code, body)
	}
	var got struct{ Items []members.Member }
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	return got.Items
}

// bindings returns the names of the RoleBindings of demo.
func (e *testEnv) bindings(t *testing.T) map[string]string {
	t.Helper()
	var list rbacv1.RoleBindingList
	if err := e.c.List(context.Background(), &list, client.InNamespace("demo")); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, rb := range list.Items {
		out[rb.Name] = rb.RoleRef.Name
	}
	return out
}

func TestMembersAPI(t *testing.T) {
	e := newTestEnv(t)
	// A project admin (alice's rights on members of demo) adds a user
	// with the build scope, then moves them to deploy.
	code, body := e.do(t, http.MethodPut, "", membersURL("User", "carol%40example.com"), aliceToken, strings.NewReader(`{"scopes":["build"]}`), nil)
	if code != http.StatusOK || !strings.Contains(body, `"scopes":["build"]`) {
		t.Fatalf("adding carol: %d %s", code, body)
	}
	want := map[string]string{members.BindingName("User", "carol@example.com", "build"): members.BuildClusterRole}
	if diff := cmp.Diff(want, e.bindings(t)); diff != "" {
		t.Errorf("RoleBindings after adding carol (-want +got):\n%s", diff)
	}
	if code, body := e.do(t, http.MethodPut, "", membersURL("User", "carol%40example.com"), aliceToken, strings.NewReader(`{"scopes":["deploy"]}`), nil); code != http.StatusOK {
		t.Fatalf("changing carol's scopes: %d %s", code, body)
	}
	want = map[string]string{members.BindingName("User", "carol@example.com", "deploy"): members.DeployClusterRole}
	if diff := cmp.Diff(want, e.bindings(t)); diff != "" {
		t.Errorf("RoleBindings after moving carol to deploy (-want +got):\n%s", diff)
	}
	if code, body := e.do(t, http.MethodPut, "", membersURL("Group", "team-x"), aliceToken, strings.NewReader(`{"scopes":["deploy","build","build"]}`), nil); code != http.StatusOK {
		t.Fatalf("adding a group: %d %s", code, body)
	}
	wantList := []members.Member{
		{Kind: "Group", Name: "team-x", Scopes: []members.Scope{members.Build, members.Deploy}},
		{Kind: "User", Name: "carol@example.com", Scopes: []members.Scope{members.Deploy}},
	}
	if diff := cmp.Diff(wantList, e.listMembers(t, aliceToken)); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}

	// Only a cluster admin (update on the Project) makes or unmakes an
	// admin, and removes one.
	if code, body := e.do(t, http.MethodPut, "", membersURL("User", "carol%40example.com"), aliceToken, strings.NewReader(`{"scopes":["deploy"],"admin":true}`), nil); code != http.StatusForbidden {
		t.Errorf("a project admin making an admin: %d %s, want 403", code, body)
	}
	if code, body := e.do(t, http.MethodPut, "", membersURL("User", "carol%40example.com"), rootToken, strings.NewReader(`{"scopes":["deploy"],"admin":true}`), nil); code != http.StatusOK || !strings.Contains(body, `"admin":true`) {
		t.Fatalf("a cluster admin making carol admin: %d %s", code, body)
	}
	if got := e.bindings(t)[members.BindingName("User", "carol@example.com", members.AdminRole)]; got != members.AdminClusterRole {
		t.Errorf("carol's admin binding binds %q, want %s", got, members.AdminClusterRole)
	}
	if code, body := e.do(t, http.MethodDelete, "", membersURL("User", "carol%40example.com"), aliceToken, nil, nil); code != http.StatusForbidden {
		t.Errorf("a project admin removing the admin: %d %s, want 403", code, body)
	}
	if code, body := e.do(t, http.MethodPut, "", membersURL("User", "carol%40example.com"), aliceToken, strings.NewReader(`{"scopes":["build"]}`), nil); code != http.StatusOK || !strings.Contains(body, `"admin":true`) {
		t.Errorf("changing the admin's scopes without admin: %d %s, want 200 and still admin", code, body)
	}
	if code, body := e.do(t, http.MethodDelete, "", membersURL("User", "carol%40example.com"), rootToken, nil, nil); code != http.StatusNoContent {
		t.Fatalf("a cluster admin removing carol: %d %s", code, body)
	}
	have := e.bindings(t)
	for _, role := range []string{"build", "deploy", members.AdminRole} {
		if name := members.BindingName("User", "carol@example.com", role); have[name] != "" {
			t.Errorf("RoleBinding %s left after removing carol", name)
		}
	}
	if code, _ := e.do(t, http.MethodDelete, "", membersURL("User", "carol%40example.com"), aliceToken, nil, nil); code != http.StatusNotFound {
		t.Errorf("removing a member twice: %d, want 404", code)
	}

	// Refused: another project's user, an API key, bad input. Nothing
	// changes.
	before := e.bindings(t)
	_, key, err := e.createKey(t, aliceToken, []members.Scope{members.Build, members.Deploy})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, method, target, credential, body string
		want                                   int
	}{
		{"no credential", http.MethodGet, membersURL(), "", "", http.StatusUnauthorized},
		{"another project's member lists", http.MethodGet, membersURL(), bobToken, "", http.StatusForbidden},
		{"another project's member adds", http.MethodPut, membersURL("User", "bob"), bobToken, `{"scopes":["build"]}`, http.StatusForbidden},
		{"an API key", http.MethodPut, membersURL("User", "dave"), key, `{"scopes":["build"]}`, http.StatusForbidden},
		{"an unknown scope", http.MethodPut, membersURL("User", "dave"), aliceToken, `{"scopes":["train"]}`, http.StatusBadRequest},
		{"no scopes", http.MethodPut, membersURL("User", "dave"), aliceToken, `{"scopes":[]}`, http.StatusBadRequest},
		{"an unknown field", http.MethodPut, membersURL("User", "dave"), aliceToken, `{"scopes":["build"],"role":"cluster-admin"}`, http.StatusBadRequest},
		{"an unknown kind", http.MethodPut, membersURL("ServiceAccount", "dave"), aliceToken, `{"scopes":["build"]}`, http.StatusBadRequest},
		{"a name with a space", http.MethodPut, membersURL("User", "da%20ve"), aliceToken, `{"scopes":["build"]}`, http.StatusBadRequest},
		{"a name with a newline", http.MethodPut, membersURL("User", "da%0Ave"), aliceToken, `{"scopes":["build"]}`, http.StatusBadRequest},
		{"an invalid project", http.MethodGet, ProjectsPath + "/Demo_1/members", aliceToken, "", http.StatusBadRequest},
		{"a path past the member", http.MethodPut, membersURL("User", "dave", "x"), aliceToken, `{"scopes":["build"]}`, http.StatusBadRequest},
		{"a credential in the query", http.MethodGet, membersURL() + "?access_token=" + aliceToken, "", "", http.StatusBadRequest},
		{"a PUT of the list", http.MethodPut, membersURL(), aliceToken, `{"scopes":["build"]}`, http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			code, got := e.do(t, tc.method, "", tc.target, tc.credential, body, nil)
			if code != tc.want {
				t.Errorf("%s %s: %d %s, want %d", tc.method, tc.target, code, got, tc.want)
			}
		})
	}
	if diff := cmp.Diff(before, e.bindings(t)); diff != "" {
		t.Errorf("refused requests changed the RoleBindings (-before +after):\n%s", diff)
	}
}

// createKey creates an API key with scopes for the user of credential and
// returns its ID and value.
func (e *testEnv) createKey(t *testing.T, credential string, scopes []members.Scope) (id, key string, err error) {
	t.Helper()
	req, err := json.Marshal(map[string]any{"name": "k", "scopes": scopes})
	if err != nil {
		return "", "", err
	}
	code, body := e.do(t, http.MethodPost, "", KeysPath, credential, strings.NewReader(string(req)), nil)
	if code != http.StatusCreated {
		t.Fatalf("creating a key: %d %s", code, body)
	}
	var k struct{ ID, Key string }
	if err := json.Unmarshal([]byte(body), &k); err != nil {
		return "", "", err
	}
	return k.ID, k.Key, nil
}
