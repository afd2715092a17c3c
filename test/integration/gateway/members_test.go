package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/gateway"
	"github.com/accelstack/accelstack/pkg/members"
)

// membersTests runs on the gateway's control plane: a project admin adds
// and removes a member through the gateway, and the real RBAC of the
// member roles decides what the member opens.
func membersTests(t *testing.T, e *env) {
	ctx := context.Background()
	const ns = "team-a"
	// carol is team-a's admin, made as a cluster admin would (the test's
	// client); dave is a user the admin adds.
	carol := e.token(ctx, t, ns, "carol")
	dave := e.token(ctx, t, ns, "dave")
	carolName, daveName := "system:serviceaccount:"+ns+":carol", "system:serviceaccount:"+ns+":dave"
	if err := members.Set(ctx, e.c, ns, members.Member{Kind: members.UserKind, Name: carolName, Scopes: []members.Scope{members.Build}, Admin: true}); err != nil {
		t.Fatal(err)
	}
	url := func(member ...string) string {
		return strings.Join(append([]string{gateway.ProjectsPath, ns, "members"}, member...), "/")
	}
	nb := "/t9k/notebooks/projects/" + ns + "/name/nb/api/status"

	t.Run("dave, no member, is refused the Notebook", func(t *testing.T) {
		if code, _ := e.do(t, "GET", nb, dave, nil); code != http.StatusForbidden {
			t.Errorf("got %d, want 403", code)
		}
		if code, _ := e.do(t, "PUT", url("User", daveName), dave, strings.NewReader(`{"scopes":["build"]}`)); code != http.StatusForbidden {
			t.Errorf("dave adding himself: %d, want 403", code)
		}
	})
	t.Run("the admin adds dave with the deploy scope: still no Notebook", func(t *testing.T) {
		if code, body := e.do(t, "PUT", url("User", daveName), carol, strings.NewReader(`{"scopes":["deploy"]}`)); code != http.StatusOK {
			t.Fatalf("got %d %q", code, body)
		}
		if code, _ := e.do(t, "GET", nb, dave, nil); code != http.StatusForbidden {
			t.Errorf("a deploy member on a Notebook: %d, want 403", code)
		}
	})
	t.Run("with build, dave opens the Notebook and sees the members", func(t *testing.T) {
		if code, body := e.do(t, "PUT", url("User", daveName), carol, strings.NewReader(`{"scopes":["build"]}`)); code != http.StatusOK {
			t.Fatalf("got %d %q", code, body)
		}
		if code, body := e.do(t, "GET", nb, dave, nil); code != http.StatusOK {
			t.Fatalf("a build member on the Notebook: %d %q", code, body)
		}
		<-e.reached
		code, body := e.do(t, "GET", url(), dave, nil)
		if code != http.StatusOK {
			t.Fatalf("listing: %d %q", code, body)
		}
		var list struct{ Items []members.Member }
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, m := range list.Items {
			got[m.Name] = fmt.Sprint(m.Scopes, " admin:", m.Admin)
		}
		if got[carolName] != "[build] admin:true" || got[daveName] != "[build] admin:false" {
			t.Errorf("members %v, want carol (build, admin) and dave (build)", got)
		}
		if code, _ := e.do(t, "PUT", url("User", "mallory"), dave, strings.NewReader(`{"scopes":["build"]}`)); code != http.StatusForbidden {
			t.Errorf("a member adding another: %d, want 403", code)
		}
	})
	t.Run("only a cluster admin makes an admin", func(t *testing.T) {
		if code, _ := e.do(t, "PUT", url("User", daveName), carol, strings.NewReader(`{"scopes":["build"],"admin":true}`)); code != http.StatusForbidden {
			t.Errorf("the project admin making dave admin: %d, want 403", code)
		}
		var rb rbacv1.RoleBinding
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: members.BindingName(members.UserKind, daveName, members.AdminRole)}, &rb)
		if err == nil {
			t.Error("dave got an admin RoleBinding")
		}
	})
	t.Run("removed, dave opens nothing", func(t *testing.T) {
		if code, body := e.do(t, "DELETE", url("User", daveName), carol, nil); code != http.StatusNoContent {
			t.Fatalf("got %d %q", code, body)
		}
		if code, _ := e.do(t, "GET", nb, dave, nil); code != http.StatusForbidden {
			t.Errorf("a removed member: %d, want 403", code)
		}
	})
	t.Run("the gateway binds no other role, and writes nothing outside Projects", func(t *testing.T) {
		cfg := rest.AnonymousClientConfig(e.cp.Config)
		cfg.BearerToken = e.token(ctx, t, "accelstack-system", "gateway")
		gw, err := client.New(cfg, client.Options{Scheme: e.c.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		for _, role := range []string{"cluster-admin", "accelstack-project-member", "accelstack-managed-project-sa"} {
			rb := &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "escalate-" + role},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
				Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "mallory"}},
			}
			if err := gw.Create(ctx, rb); err == nil {
				t.Errorf("the gateway's own rights bound %s", role)
			}
		}
		admin := e.token(ctx, t, "plain", "admin") // cluster-admin, bound above
		if code, body := e.do(t, "PUT", gateway.ProjectsPath+"/plain/members/User/x", admin, strings.NewReader(`{"scopes":["build"]}`)); code != http.StatusNotFound {
			t.Errorf("a member of a namespace that is no Project's: %d %q, want 404", code, body)
		}
	})
}
