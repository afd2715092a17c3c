package t9kcli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/gateway"
	"github.com/accelstack/accelstack/pkg/project"
	"github.com/accelstack/accelstack/pkg/t9kcli"
	"github.com/accelstack/accelstack/pkg/t9kconfig"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// TestCLIThroughGateway: t9k config auth logs in at the gateway with an
// API key or a user name and password, keeps the context in the T9k
// config, and the other commands then reach the cluster through the
// gateway as that user, with no kubeconfig.
func TestCLIThroughGateway(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	cp := harness.StartControlPlane(t)
	ctx := testutil.SubtestContext(t)
	admin := cp.Client
	harness.CreateNamespace(ctx, t, admin, "accelstack-system")
	harness.CreateNamespace(ctx, t, admin, "demo")
	harness.CreateNamespace(ctx, t, admin, "other")
	cp.ApplyDeploy(t, "controllers/project-roles.yaml", "gateway/rbac.yaml")
	bind := func(ns, name, role string, subject rbacv1.Subject) {
		testutil.MustCreate(ctx, t, admin, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{subject},
		})
	}
	for _, ns := range []string{"demo", "other"} {
		bind(ns, project.GatewayRoleBindingName, project.GatewayClusterRole, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "accelstack-system", Name: "gateway"})
	}
	bind("demo", "alice", "accelstack-project-member", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "demo", Name: "alice"})
	bind("demo", "carol", "accelstack-project-build", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carol"})
	for _, o := range []client.Object{genericJob("demo", "mnist"), genericJob("demo", "bert"), genericJob("other", "gpt")} {
		testutil.MustCreate(ctx, t, admin, o)
	}
	gw, caFile := startGateway(ctx, t, cp)
	alice := saToken(ctx, t, admin, "demo", "alice")

	dir := t.TempDir()
	config := filepath.Join(dir, "t9k-config.yaml")
	t.Setenv("HOME", dir) // no kubeconfig, and the discovery cache here
	run := func(input string, args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		root := t9kcli.NewRoot(genericiooptions.IOStreams{In: strings.NewReader(input), Out: &out, ErrOut: &errOut})
		root.SetArgs(append(args, "-c", config))
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		err := root.ExecuteContext(ctx)
		return out.String(), errOut.String(), err
	}

	t.Run("config auth with an API key", func(t *testing.T) {
		key := createKey(ctx, t, gw, alice)
		out, _, err := run(key+"\n\n", "config", "auth", gw.URL, "--apikey", "--certificate-authority", caFile)
		if err != nil || !strings.Contains(out, "Please enter your API Key:") || !strings.Contains(out, "Login succeeded!") {
			t.Fatalf("t9k config auth --apikey: %v\n%s", err, out)
		}
		cfg, err := t9kconfig.Load(config)
		if err != nil || len(cfg.Contexts) != 1 || !strings.HasPrefix(cfg.CurrentContext, "apikey-") || cfg.Contexts[0].Auth.APIKey != key {
			t.Fatalf("the T9k config after the login: %+v, %v", cfg, err)
		}
		if _, _, err := run("00000000-0000-4000-8000-000000000000\n\n", "config", "auth", gw.URL, "-k", "--certificate-authority", caFile); err == nil || !strings.Contains(err.Error(), "not valid") {
			t.Errorf("an unknown key: %v, want refused as not valid", err)
		}
	})
	t.Run("commands reach the cluster through the gateway as the key's user", func(t *testing.T) {
		out, errOut, err := run("", "gj", "get", "-p", "demo")
		if err != nil || !strings.Contains(out, "mnist") {
			t.Fatalf("t9k gj get -p demo: %v\n%s%s", err, out, errOut)
		}
		if _, _, err := run("", "gj", "describe", "gpt", "-p", "other"); err == nil || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("t9k gj describe -p other: %v, want forbidden", err)
		}
		if _, _, err := run("", "gj", "delete", "bert", "-p", "demo", "-f"); err != nil {
			t.Errorf("t9k gj delete with the key: %v", err)
		}
	})
	t.Run("config auth with a password, and the contexts", func(t *testing.T) {
		out, _, err := run("carol\ncarol-pw\n\n", "config", "auth", gw.URL, "--certificate-authority", caFile)
		if err != nil || !strings.Contains(out, "Please enter your username:") || !strings.Contains(out, "Login succeeded!") {
			t.Fatalf("t9k config auth: %v\n%s", err, out)
		}
		if _, _, err := run("carol\nwrong\n", "config", "auth", gw.URL, "--certificate-authority", caFile); err == nil || !strings.Contains(err.Error(), "wrong user name or password") {
			t.Errorf("a wrong password: %v", err)
		}
		if out, _, err := run("", "gj", "get", "-p", "demo", "-o", "name"); err != nil || strings.TrimSpace(out) != "genericjob.batch.tensorstack.dev/mnist" {
			t.Errorf("t9k gj get as carol: %v\n%s", err, out)
		}
		out, _, err = run("", "config", "get-contexts")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if err != nil || len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "CURRENT NAME SERVER AUTH_TYPE" ||
			!strings.HasPrefix(lines[2], "*") || !strings.Contains(lines[2], "carol-127.0.0.1") || !strings.HasSuffix(lines[2], "token") ||
			!strings.HasSuffix(lines[1], "apikey") {
			t.Errorf("t9k config get-contexts: %v\n%s", err, out)
		}
		cfg, _ := t9kconfig.Load(config)
		if cfg.CurrentContext != "carol-127.0.0.1" {
			t.Fatalf("current context %q, want carol-127.0.0.1", cfg.CurrentContext)
		}
		var keyContext string
		for _, c := range cfg.Contexts {
			if c.Auth.APIKey != "" {
				keyContext = c.Name
			}
		}
		if _, _, err := run("", "config", "use-context", keyContext); err != nil {
			t.Fatal(err)
		}
		if _, _, err := run("", "config", "delete-context", keyContext); err != nil {
			t.Fatal(err)
		}
		if _, _, err := run("", "gj", "describe", "mnist", "-p", "demo"); err == nil || !strings.Contains(err.Error(), "no current context") {
			t.Errorf("after deleting the current context: %v, want an error saying so", err)
		}
		if _, _, err := run("", "config", "use-context", "nothing"); err == nil {
			t.Error("use-context of an unknown context succeeded")
		}
	})
}

// startGateway starts a gateway as its ServiceAccount, with a password
// login over a users file (carol, carol-pw), and returns it and its CA's
// file.
func startGateway(ctx context.Context, t *testing.T, cp *harness.ControlPlane) (*httptest.Server, string) {
	t.Helper()
	cfg := rest.AnonymousClientConfig(cp.Config)
	cfg.BearerToken = saToken(ctx, t, cp.Client, "accelstack-system", "gateway")
	gw, err := harness.StartGateway(ctx, cfg, t.TempDir(), map[string]string{"carol": "carol-pw"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	return gw.Server, gw.CAFile
}

// saToken returns a token of the ServiceAccount ns/name, created unless
// it exists.
func saToken(ctx context.Context, t *testing.T, c client.Client, ns, name string) string {
	t.Helper()
	token, err := harness.ServiceAccountToken(ctx, c, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// createKey creates an API key with the build scope with token at the
// gateway and returns it.
func createKey(ctx context.Context, t *testing.T, gw *httptest.Server, token string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", gw.URL+gateway.KeysPath, strings.NewReader(`{"name":"cli","scopes":["build"]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := gw.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var key struct{ Key string }
	if err := json.NewDecoder(resp.Body).Decode(&key); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("creating a key: %d, %v", resp.StatusCode, err)
	}
	return key.Key
}
