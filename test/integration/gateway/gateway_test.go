package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/gateway"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/project"
	"github.com/accelstack/accelstack/pkg/webroute"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// env is a control plane with the roles of deploy/, two projects' worth
// of namespaces and members, a Notebook in each, and a gateway running as
// its own ServiceAccount in front of a recording upstream.
type env struct {
	cp       *harness.ControlPlane
	c        client.Client
	gw       *httptest.Server
	upstream *httptest.Server
	// console serves the consoles.
	console *httptest.Server
	// reached counts the requests that reached the upstream.
	reached chan *http.Request
	// dials are the addresses the gateway dialed.
	dials chan string
}

func TestGateway(t *testing.T) {
	e := startEnv(t)
	ctx := context.Background()
	alice := e.token(ctx, t, "team-a", "alice")
	bob := e.token(ctx, t, "team-b", "bob")
	nbA := "/t9k/notebooks/projects/team-a/name/nb/api/status"

	t.Run("a member opens their project's Notebook with the workload's token", func(t *testing.T) {
		if code, body := e.do(t, "GET", nbA, alice, nil); code != http.StatusOK {
			t.Fatalf("got %d %q", code, body)
		}
		r := <-e.reached
		if addr := <-e.dials; addr != "10.244.0.7:8080" {
			t.Errorf("the gateway dialed %s, want the ready pod behind the Notebook's Service at its http port", addr)
		}
		if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != activity.AccessCookie+"=token-team-a" {
			t.Errorf("the workload got Authorization %q, Cookie %q", r.Header.Get("Authorization"), r.Header.Get("Cookie"))
		}
	})
	t.Run("a member of another project is refused", func(t *testing.T) {
		if code, _ := e.do(t, "GET", nbA, bob, nil); code != http.StatusForbidden {
			t.Errorf("got %d, want 403", code)
		}
	})
	t.Run("no token, a forged token", func(t *testing.T) {
		for _, cred := range []string{"", alice + "x"} {
			if code, _ := e.do(t, "GET", nbA, cred, nil); code != http.StatusUnauthorized {
				t.Errorf("got %d, want 401", code)
			}
		}
	})
	t.Run("outside Project namespaces the gateway reads nothing", func(t *testing.T) {
		// cluster-admin may open the Notebook, but the gateway may not read
		// its access Secret: the namespace is no Project's.
		admin := e.token(ctx, t, "plain", "admin")
		testutil.MustCreate(ctx, t, e.c, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "admin"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "plain", Name: "admin"}},
		})
		// The API server's authorizer sees the new binding a moment later.
		testutil.Poll(ctx, t, "the cluster admin's request answered 502", func() (bool, string, error) {
			code, body := e.do(t, "GET", "/t9k/notebooks/projects/plain/name/nb/", admin, nil)
			if code == http.StatusForbidden {
				return false, body, nil
			}
			if code != http.StatusBadGateway {
				return false, "", fmt.Errorf("got %d %q, want 502", code, body)
			}
			return true, "", nil
		})
	})
	t.Run("an API key carries its user's rights within its scopes, until revoked", func(t *testing.T) {
		code, body := e.do(t, "POST", gateway.KeysPath, alice, strings.NewReader(`{"name":"ci","scopes":["build"]}`))
		if code != http.StatusCreated {
			t.Fatalf("create: %d %q", code, body)
		}
		var key struct{ ID, Key string }
		if err := json.Unmarshal([]byte(body), &key); err != nil {
			t.Fatal(err)
		}
		if code, _ := e.do(t, "GET", nbA, key.Key, nil); code != http.StatusOK {
			t.Errorf("the key on its user's Notebook: %d", code)
		}
		<-e.reached
		if code, _ := e.do(t, "GET", "/t9k/notebooks/projects/team-b/name/nb/", key.Key, nil); code != http.StatusForbidden {
			t.Errorf("the key on another project's Notebook: %d, want 403", code)
		}
		secret := &corev1.Secret{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "accelstack-system", Name: "apikey-" + key.ID}, secret); err != nil {
			t.Fatalf("the key's Secret: %v", err)
		}
		for k, v := range secret.Data {
			if strings.Contains(string(v), key.Key) {
				t.Errorf("the key's Secret holds the key in %s", k)
			}
		}
		if code, _ := e.do(t, "DELETE", gateway.KeysPath+"/"+key.ID, alice, nil); code != http.StatusNoContent {
			t.Errorf("revoke: %d", code)
		}
		if code, _ := e.do(t, "GET", nbA, key.Key, nil); code != http.StatusUnauthorized {
			t.Errorf("the revoked key: %d, want 401", code)
		}
	})
	t.Run("members", func(t *testing.T) { membersTests(t, e) })
	t.Run("Kubernetes API", func(t *testing.T) { kubeAPITests(t, e, alice) })
	t.Run("browser login", func(t *testing.T) { loginTests(t, e) })
	t.Run("browser login at the gateway's provider path", func(t *testing.T) { providerLoginTests(t, e) })
	select {
	case r := <-e.reached:
		t.Errorf("a refused request reached the workload: %s", r.URL)
	default:
	}
}

func startEnv(t *testing.T) *env {
	t.Helper()
	cp := harness.StartControlPlane(t)
	e := &env{cp: cp, c: cp.Client, reached: make(chan *http.Request, 16), dials: make(chan string, 64)}
	ctx := context.Background()
	for _, ns := range []string{"accelstack-system", "team-a", "team-b", "plain"} {
		testutil.MustCreate(ctx, t, e.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	e.apply(ctx, t, filepath.Join("deploy", "controllers", "project-roles.yaml"))
	e.apply(ctx, t, filepath.Join("deploy", "gateway", "rbac.yaml"))
	gatewaySA := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "accelstack-system", Name: "gateway"}
	for _, ns := range []string{"team-a", "team-b"} {
		// What the Project controller binds in a project's namespace: the
		// gateway's rights, and here the member role to one user.
		e.bind(ctx, t, ns, project.GatewayRoleBindingName, project.GatewayClusterRole, gatewaySA)
		e.bind(ctx, t, ns, "members", "accelstack-project-member", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: map[string]string{"team-a": "alice", "team-b": "bob"}[ns]})
	}
	for _, ns := range []string{"team-a", "team-b", "plain"} {
		e.notebook(ctx, t, ns)
	}

	e.upstream = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.reached <- r.Clone(context.Background())
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(e.upstream.Close)
	e.startConsole(t)

	opts := gateway.DefaultOptions()
	opts.CacheTTL = 0
	e.gw = httptest.NewServer(e.gateway(ctx, t, opts).Handler())
	t.Cleanup(e.gw.Close)
	return e
}

// gateway returns a gateway of opts that runs with its ServiceAccount's
// token only and whose every dial but the console's reaches the upstream.
func (e *env) gateway(ctx context.Context, t *testing.T, opts gateway.Options) *gateway.Gateway {
	t.Helper()
	cfg := rest.AnonymousClientConfig(e.cp.Config)
	cfg.BearerToken = e.token(ctx, t, "accelstack-system", "gateway")
	g, err := gateway.New(ctx, cfg, opts, logr.Discard(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	tr := gateway.NewTransport()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		if addr == e.console.Listener.Addr().String() {
			return d.DialContext(ctx, network, addr)
		}
		e.dials <- addr
		return d.DialContext(ctx, network, e.upstream.Listener.Addr().String())
	}
	g.Transport = tr
	return g
}

// apply creates the objects of the YAML file path of the repository.
func (e *env) apply(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		obj, err := e.c.Scheme().New(schema.FromAPIVersionAndKind(meta.APIVersion, meta.Kind))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		testutil.MustCreate(ctx, t, e.c, obj.(client.Object))
	}
}

// bind binds the ClusterRole role to subject in ns.
func (e *env) bind(ctx context.Context, t *testing.T, ns, name, role string, subject rbacv1.Subject) {
	t.Helper()
	testutil.MustCreate(ctx, t, e.c, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{subject},
	})
}

// notebook creates the Notebook nb of ns and its access Secret, holding
// token-<ns>, as the Notebook controller would.
func (e *env) notebook(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	nb := &tensorstackv1beta1.Notebook{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nb"},
		Spec: tensorstackv1beta1.NotebookSpec{Template: tensorstackv1beta1.NotebookTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: tensorstackv1beta1.NotebookContainer, Image: "jupyter"}},
		}}},
	}
	testutil.MustCreate(ctx, t, e.c, nb)
	testutil.MustCreate(ctx, t, e.c, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: interactive.AccessSecretName(webroute.NotebookObjectName(string(nb.UID))),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "tensorstack.dev/v1beta1", Kind: "Notebook", Name: nb.Name, UID: nb.UID, Controller: ptr.To(true)}},
		},
		Data: map[string][]byte{activity.AccessTokenKey: []byte("token-" + ns)},
	})
	// Its Service and a ready pod behind it (the upstream stands in for
	// the pod: the test's transport dials it whatever the address).
	svc := webroute.NotebookObjectName(string(nb.UID))
	testutil.MustCreate(ctx, t, e.c, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: svc},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
	})
	testutil.MustCreate(ctx, t, e.c, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: svc + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.7"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(8080))}},
	})
}

// token creates the ServiceAccount ns/name unless it exists and returns a
// token of it.
func (e *env) token(ctx context.Context, t *testing.T, ns, name string) string {
	t.Helper()
	token, err := harness.ServiceAccountToken(ctx, e.c, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// do sends a request to the gateway with the bearer credential.
func (e *env) do(t *testing.T, method, target, credential string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.gw.URL+target, body)
	if err != nil {
		t.Fatal(err)
	}
	if credential != "" {
		req.Header.Set("Authorization", "Bearer "+credential)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
