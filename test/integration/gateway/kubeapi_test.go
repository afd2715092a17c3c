package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/accelstack/accelstack/pkg/gateway"
)

// kubeAPITests: the gateway's Kubernetes API is the API server as the
// caller. A token goes through as it is; an API key is its user, within
// the rules of its scopes; a client cannot impersonate through it.
func kubeAPITests(t *testing.T, e *env, alice string) {
	ctx := context.Background()
	api := func(path string) string { return gateway.KubernetesPath + path }
	podsA, podsB := api("/api/v1/namespaces/team-a/pods"), api("/api/v1/namespaces/team-b/pods")

	t.Run("a token is its own user", func(t *testing.T) {
		if code, body := e.do(t, "GET", podsA, alice, nil); code != http.StatusOK || !strings.Contains(body, `"kind":"PodList"`) {
			t.Errorf("alice lists her project's pods: %d %.200s", code, body)
		}
		if code, _ := e.do(t, "GET", podsB, alice, nil); code != http.StatusForbidden {
			t.Errorf("alice lists another project's pods: %d, want 403 from the API server", code)
		}
		if code, _ := e.do(t, "GET", podsA, alice+"x", nil); code != http.StatusUnauthorized {
			t.Errorf("a forged token: %d, want 401", code)
		}
		if code, _ := e.do(t, "GET", podsA, "", nil); code != http.StatusUnauthorized {
			t.Errorf("no credential: %d, want 401", code)
		}
	})
	t.Run("a client's impersonation headers are dropped", func(t *testing.T) {
		req, err := http.NewRequestWithContext(ctx, "GET", e.gw.URL+podsB, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+alice)
		req.Header.Set("Impersonate-User", "system:admin")
		req.Header.Add("Impersonate-Group", "system:masters")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("alice asking as system:masters: %d, want 403", resp.StatusCode)
		}
	})

	newKey := func(t *testing.T, scopes string) string {
		t.Helper()
		code, body := e.do(t, "POST", gateway.KeysPath, alice, strings.NewReader(`{"name":"cli-`+strings.Trim(scopes, `"`)+`","scopes":[`+scopes+`]}`))
		var key struct{ Key string }
		if code != http.StatusCreated || json.Unmarshal([]byte(body), &key) != nil {
			t.Fatalf("creating a key: %d %q", code, body)
		}
		return key.Key
	}
	t.Run("an API key is its user within its scopes", func(t *testing.T) {
		build, deploy := newKey(t, `"build"`), newKey(t, `"deploy"`)
		for _, tc := range []struct {
			what, method, path, key string
			want                    int
		}{
			{"discovery", "GET", api("/apis"), build, http.StatusOK},
			{"the version", "GET", api("/version"), deploy, http.StatusOK},
			{"pods of the user's project", "GET", podsA, build, http.StatusOK},
			{"deleting a pod with the build scope (there is none)", "DELETE", podsA + "/none", build, http.StatusNotFound},
			{"ConfigMaps with the deploy scope", "GET", api("/api/v1/namespaces/team-a/configmaps"), deploy, http.StatusOK},
			{"deleting a pod with the deploy scope", "DELETE", podsA + "/none", deploy, http.StatusForbidden},
			{"deleting every pod with the deploy scope", "DELETE", podsA, deploy, http.StatusForbidden},
			{"RBAC, in no scope", "GET", api("/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings"), build, http.StatusForbidden},
			{"a cluster-scoped resource", "GET", api("/api/v1/nodes"), build, http.StatusForbidden},
			{"another project, which the user may not read", "GET", podsB, build, http.StatusForbidden},
		} {
			code, body := e.do(t, tc.method, tc.path, tc.key, nil)
			if code != tc.want {
				t.Errorf("%s: %s %s = %d %.200s, want %d", tc.what, tc.method, tc.path, code, body, tc.want)
			}
		}
		code, body := e.do(t, "GET", api("/api/v1/nodes"), build, nil)
		if code != http.StatusForbidden || !strings.Contains(body, "API key") {
			t.Errorf("the refusal says why: %d %q", code, body)
		}
	})
	t.Run("paths that leave the API are refused", func(t *testing.T) {
		for _, p := range []string{api("/../t9k/security/server/apis/v1/apikeys"), api("/api/v1/namespaces/team-a%2Fpods")} {
			if code, _ := e.do(t, "GET", p, alice, nil); code != http.StatusBadRequest && code != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 400 or 404", p, code)
			}
		}
	})
}
