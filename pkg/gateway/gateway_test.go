package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/gateway/apikey"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/webroute"
)

// The fake API's users: the token of each, and what RBAC lets them get.
var (
	aliceToken = "alice-token"
	bobToken   = "bob-token"
	rootToken  = "root-token"
	// allowed maps user to the "<resource>/<namespace>/<name>" they may
	// get the proxy subresource of, and the "<verb> <resource>/<namespace>/<name>"
	// they may do otherwise.
	allowed = map[string][]string{
		"alice": {
			"notebooks/demo/nb", "explorers/demo/ex", "mlservices/demo/mnist", "tensorboards/demo/tb",
			"list members/demo/", "update members/demo/", "delete members/demo/",
		},
		"bob":  {"notebooks/other/nb", "list members/other/"},
		"root": {"list members/demo/", "update members/demo/", "delete members/demo/", "update projects//demo"},
	}
)

// fakeAPI answers TokenReviews and SubjectAccessReviews as the API server
// would for the users above, and counts them.
type fakeAPI struct {
	mu                sync.Mutex
	reviews, accesses int
}

func (f *fakeAPI) create(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch o := obj.(type) {
	case *authenticationv1.TokenReview:
		f.reviews++
		for user, token := range map[string]string{"alice": aliceToken, "bob": bobToken, "root": rootToken} {
			if o.Spec.Token == token {
				o.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: user, UID: user + "-uid", Groups: []string{"system:authenticated"}}}
			}
		}
		return nil
	case *authorizationv1.SubjectAccessReview:
		f.accesses++
		a := o.Spec.ResourceAttributes
		want := a.Verb + " " + a.Resource + "/" + a.Namespace + "/" + a.Name
		if a.Verb == "get" && a.Subresource == "proxy" {
			want = a.Resource + "/" + a.Namespace + "/" + a.Name
		}
		if a.Group == "tensorstack.dev" {
			o.Status.Allowed = slices.Contains(allowed[o.Spec.User], want)
		}
		return nil
	}
	return c.Create(ctx, obj, opts...)
}

// counts returns the reviews answered.
func (f *fakeAPI) counts() (reviews, accesses int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reviews, f.accesses
}

// upstream is the workloads' side: one server standing in for every
// Service, recording what reached it.
type upstream struct {
	srv *httptest.Server
	mu  sync.Mutex
	// handler answers instead of the recording default when set.
	handler http.Handler
	got     []*http.Request
	// dialed are the Service addresses the gateway dialed.
	dialed []string
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		h := u.handler
		u.got = append(u.got, r.Clone(context.Background()))
		u.mu.Unlock()
		if h != nil {
			h.ServeHTTP(w, r)
			return
		}
		fmt.Fprintf(w, "upstream %s", r.URL.Path)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// transport dials the upstream whatever the address, recording it.
func (u *upstream) transport() *http.Transport {
	tr := NewTransport()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		u.mu.Lock()
		u.dialed = append(u.dialed, addr)
		u.mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, u.srv.Listener.Addr().String())
	}
	return tr
}

// requests returns what reached the upstream.
func (u *upstream) requests() []*http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*http.Request(nil), u.got...)
}

// addresses returns the addresses dialed.
func (u *upstream) addresses() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.dialed...)
}

// setHandler makes h answer the upstream's requests.
func (u *upstream) setHandler(h http.Handler) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.handler = h
}

// testEnv is a gateway over a fake API holding a Notebook, an Explorer, a
// TensorBoard whose access Secret is not its own, an EventListener and an
// MLService's Service.
type testEnv struct {
	api  *fakeAPI
	c    client.Client
	up   *upstream
	gw   *httptest.Server
	nbID types.UID
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := tensorstackv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := triggersv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	e := &testEnv{api: &fakeAPI{}, up: newUpstream(t), nbID: "nb-uid"}
	nb := &tensorstackv1beta1.Notebook{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "nb", UID: e.nbID}}
	ex := &tensorstackv1beta1.Explorer{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "ex", UID: "ex-uid"}}
	tb := &tensorstackv1beta1.TensorBoard{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "tb", UID: "tb-uid"}}
	el := &triggersv1beta1.EventListener{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "el", UID: "el-uid"}}
	mls := &tensorstackv1beta1.MLService{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "mnist", UID: "mls-uid"}}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "mnist", OwnerReferences: []metav1.OwnerReference{ownerRef(mls, "MLService")}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "metrics", Port: 9090}, {Name: "http", Port: 8080}}},
	}
	objs := []client.Object{nb, ex, tb, el, mls, svc, endpointSlice("demo", "mnist", "http", "10.0.0.9", 8080)}
	for i, name := range []string{
		webroute.NotebookObjectName(string(e.nbID)), webroute.ExplorerObjectName("ex", webroute.CodeServer),
		webroute.TensorBoardObjectName("tb"), webroute.EventListenerObjectName("el", "el-uid"),
	} {
		objs = append(objs,
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}},
			endpointSlice("demo", name, "http", fmt.Sprintf("10.0.0.%d", i+1), 8080))
	}
	e.c = fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(objs...).
		WithObjects(
			accessSecret(nb, "Notebook", webroute.NotebookObjectName(string(e.nbID)), "nb-secret"),
			accessSecret(ex, "Explorer", webroute.ExplorerObjectName("ex", webroute.CodeServer), "cs-secret"),
			accessSecret(nb, "Notebook", webroute.TensorBoardObjectName("tb"), "stolen")).
		WithInterceptorFuncs(interceptor.Funcs{Create: e.api.create}).Build()
	keys := apikey.NewStore(e.c, "accelstack-system", 0, time.Minute)
	g := &Gateway{
		Authenticator: NewBearerAuthenticator(keys, e.c, nil, time.Minute, 100),
		Authorizer:    NewSARAuthorizer(e.c, time.Minute, 100),
		Resolver:      NewResolver(e.c, time.Minute, 100),
		Router:        Router{ServingDomain: "serving.example.com"},
		Keys:          keys,
		Client:        e.c,
		Transport:     e.up.transport(),
		Log:           logr.Discard(),
		Console:       &url.URL{Scheme: "http", Host: "console.accelstack-system.svc:8080"},
	}
	e.gw = httptest.NewServer(g.Handler())
	t.Cleanup(e.gw.Close)
	return e
}

// endpointSlice returns the EndpointSlice of the Service svc of ns with
// one ready endpoint, addr, at port named portName.
func endpointSlice(ns, svc, portName, addr string, port int32) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: svc + "-x", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
			{Addresses: []string{"10.9.9.9"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}},
		},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("metrics"), Port: ptr.To(int32(9090))}, {Name: ptr.To(portName), Port: ptr.To(port)}},
	}
}

// ownerRef returns a controller reference to obj of kind.
func ownerRef(obj metav1.Object, kind string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "tensorstack.dev/v1beta1", Kind: kind, Name: obj.GetName(), UID: obj.GetUID(), Controller: ptr.To(true)}
}

// accessSecret returns the access Secret of the workload child name,
// controlled by owner of kind.
func accessSecret(owner metav1.Object, kind, name, token string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: owner.GetNamespace(), Name: interactive.AccessSecretName(name), OwnerReferences: []metav1.OwnerReference{ownerRef(owner, kind)}},
		Data:       map[string][]byte{activity.AccessTokenKey: []byte(token)},
	}
}

// do sends a request to the gateway with the bearer credential and host,
// returning the status and body.
func (e *testEnv) do(t *testing.T, method, host, target, credential string, body io.Reader, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.gw.URL+target, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if host != "" {
		req.Host = host
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

func TestGatewayProxiesWithTheWorkloadsToken(t *testing.T) {
	e := newTestEnv(t)
	const path = "/t9k/notebooks/projects/demo/name/nb/api/kernels"
	code, body := e.do(t, "GET", "ai.example.com", path+"?a=b", aliceToken, nil, http.Header{
		"Cookie": {"_xsrf=abc; t9k-access=forged; t9k-session=sealed; theme=dark; t9k-login=flow; ory_hydra_session=s"}, activity.ProbeHeader: {"1"},
	})
	if code != http.StatusOK || body != "upstream "+path {
		t.Fatalf("got %d %q", code, body)
	}
	reqs := e.up.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests reached the upstream", len(reqs))
	}
	r := reqs[0]
	if r.Header.Get("Authorization") != "" || r.Header.Get(activity.ProbeHeader) != "" {
		t.Errorf("the user's Authorization or the probe header reached the workload: %v", r.Header)
	}
	if got := r.Header.Get("Cookie"); got != "_xsrf=abc; theme=dark; t9k-access=nb-secret" {
		t.Errorf("Cookie = %q, want the user's other cookies and the workload's token only", got)
	}
	if r.Host != "ai.example.com" || r.URL.RawQuery != "a=b" || r.Header.Get("X-Forwarded-Host") != "ai.example.com" {
		t.Errorf("Host %q, query %q, X-Forwarded-Host %q", r.Host, r.URL.RawQuery, r.Header.Get("X-Forwarded-Host"))
	}
	want := "10.0.0.1:8080"
	if got := e.up.addresses(); len(got) == 0 || got[0] != want {
		t.Errorf("dialed %v, want %s", got, want)
	}
	// The decisions are cached: a second request asks the API nothing.
	if code, _ := e.do(t, "GET", "", path, aliceToken, nil, nil); code != http.StatusOK {
		t.Fatalf("second request: %d", code)
	}
	if reviews, accesses := e.api.counts(); reviews != 1 || accesses != 1 {
		t.Errorf("%d token reviews and %d access reviews for two requests, want 1 each", reviews, accesses)
	}
}

func TestGatewayRefuses(t *testing.T) {
	e := newTestEnv(t)
	nb := "/t9k/notebooks/projects/demo/name/nb/"
	for _, tc := range []struct {
		name, host, target, credential string
		want                           int
	}{
		{"no credential", "", nb, "", http.StatusUnauthorized},
		{"a forged token", "", nb, "forged", http.StatusUnauthorized},
		{"an unknown API key", "", nb, "e4ccd2a3-3425-44b0-8b44-148bd303a0f9", http.StatusUnauthorized},
		{"a member of another project", "", nb, bobToken, http.StatusForbidden},
		{"a workload the user may not open", "", "/explorer/demo/ex/file-browser/", bobToken, http.StatusForbidden},
		{"a missing workload the user may open", "", "/t9k/notebooks/projects/other/name/nb/", bobToken, http.StatusNotFound},
		{"an access Secret the workload does not control", "", "/tensorboard/demo/tb/", aliceToken, http.StatusServiceUnavailable},
		{"a workload without its Service yet", "", "/explorer/demo/ex/file-browser/", aliceToken, http.StatusServiceUnavailable},
		{"a key in the query", "", nb + "?apikey=e4ccd2a3-3425-44b0-8b44-148bd303a0f9", "", http.StatusBadRequest},
		{"an escaping path", "", "/t9k/notebooks/projects/demo/name/nb/%2e%2e/%2e%2e/x/name/y/", aliceToken, http.StatusBadRequest},
		{"an encoded slash", "", "/tensorboard/demo/tb%2Fx/", aliceToken, http.StatusBadRequest},
		{"no route", "", "/etc/passwd", aliceToken, http.StatusNotFound},
		{"a serving host of no Service", "other.demo.serving.example.com", "/", aliceToken, http.StatusNotFound},
	} {
		if code, body := e.do(t, "GET", tc.host, tc.target, tc.credential, nil, nil); code != tc.want {
			t.Errorf("%s: got %d %q, want %d", tc.name, code, body, tc.want)
		}
	}
	if n := len(e.up.requests()); n != 0 {
		t.Errorf("%d refused requests reached a workload", n)
	}
}

func TestGatewayRoutes(t *testing.T) {
	e := newTestEnv(t)
	// code-server serves at its root: the prefix is stripped.
	if code, body := e.do(t, "GET", "", "/explorer/demo/ex/code-server/static/x.js", aliceToken, nil, nil); code != http.StatusOK || body != "upstream /static/x.js" {
		t.Errorf("code-server: %d %q", code, body)
	}
	// An EventListener needs no login and gets no token.
	if code, _ := e.do(t, "POST", "", "/t9k/workflow/triggers/demo/el", "", strings.NewReader("{}"), nil); code != http.StatusOK {
		t.Errorf("event listener: %d", code)
	}
	// A serving host reaches the Service's http port, authorized on its
	// MLService.
	if code, body := e.do(t, "POST", "mnist.demo.serving.example.com", "/v1/models/mnist:predict", aliceToken, strings.NewReader("{}"), nil); code != http.StatusOK || body != "upstream /v1/models/mnist:predict" {
		t.Errorf("serving: %d %q", code, body)
	}
	reqs := e.up.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests reached the upstream", len(reqs))
	}
	if got := reqs[0].Header.Get("Cookie"); got != activity.AccessCookie+"=cs-secret" {
		t.Errorf("code-server Cookie = %q", got)
	}
	if got := reqs[1].Header.Get("Cookie"); got != "" {
		t.Errorf("event listener Cookie = %q, want none", got)
	}
	// The ready pods behind the Services, at the port the Service's http
	// port targets.
	wantDialed := []string{"10.0.0.2:8080", "10.0.0.4:8080", "10.0.0.9:8080"}
	if got := e.up.addresses(); strings.Join(got, " ") != strings.Join(wantDialed, " ") {
		t.Errorf("dialed %v, want %v", got, wantDialed)
	}
}

func TestGatewayAPIKeys(t *testing.T) {
	e := newTestEnv(t)
	code, body := e.do(t, "POST", "", KeysPath, aliceToken, strings.NewReader(`{"name":"ci","scopes":["build"]}`), nil)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %q", code, body)
	}
	var created keyView
	if err := json.Unmarshal([]byte(body), &created); err != nil || !apikey.Shaped(created.Key) {
		t.Fatalf("create answered %q (%v): no key", body, err)
	}
	// Stored hashed: no Secret holds the key's value.
	var secrets corev1.SecretList
	if err := e.c.List(context.Background(), &secrets); err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		for k, v := range s.Data {
			if strings.Contains(string(v), created.Key) {
				t.Errorf("Secret %s/%s holds the key in %s", s.Namespace, s.Name, k)
			}
		}
	}
	nb := "/t9k/notebooks/projects/demo/name/nb/"
	if code, _ := e.do(t, "GET", "", nb, created.Key, nil, nil); code != http.StatusOK {
		t.Errorf("the key on a Notebook of its user: %d", code)
	}
	if code, _ := e.do(t, "GET", "mnist.demo.serving.example.com", "/", created.Key, nil, nil); code != http.StatusForbidden {
		t.Errorf("the build key on an MLService: %d, want 403", code)
	}
	if code, _ := e.do(t, "GET", "", KeysPath, created.Key, nil, nil); code != http.StatusForbidden {
		t.Errorf("a key listing keys: %d, want 403", code)
	}
	code, body = e.do(t, "GET", "", KeysPath, aliceToken, nil, nil)
	if code != http.StatusOK || !strings.Contains(body, created.ID) || strings.Contains(body, created.Key) {
		t.Errorf("list: %d %q, want the key's ID and not its value", code, body)
	}
	if code, body := e.do(t, "GET", "", KeysPath, bobToken, nil, nil); code != http.StatusOK || strings.Contains(body, created.ID) {
		t.Errorf("bob's list: %d %q, want none of alice's keys", code, body)
	}
	if code, _ := e.do(t, "DELETE", "", KeysPath+"/"+created.ID, bobToken, nil, nil); code != http.StatusNotFound {
		t.Errorf("bob revoking alice's key: %d, want 404", code)
	}
	if code, _ := e.do(t, "DELETE", "", KeysPath+"/"+created.ID, aliceToken, nil, nil); code != http.StatusNoContent {
		t.Errorf("revoke: %d", code)
	}
	if code, _ := e.do(t, "GET", "", nb, created.Key, nil, nil); code != http.StatusUnauthorized {
		t.Errorf("a revoked key: %d, want 401", code)
	}
	for _, bad := range []string{`{"name":"","scopes":["build"]}`, `{"name":"x","scopes":[]}`, `{"name":"x","scopes":["admin"]}`, `{"name":"x","scopes":["build"],"user":"bob"}`} {
		if code, body := e.do(t, "POST", "", KeysPath, aliceToken, strings.NewReader(bad), nil); code != http.StatusBadRequest {
			t.Errorf("create %s: %d %q, want 400", bad, code, body)
		}
	}
}

// TestGatewayStreams checks that a response reaches the client as the
// workload writes it, and that a WebSocket upgrade passes through.
func TestGatewayStreams(t *testing.T) {
	e := newTestEnv(t)
	release := make(chan struct{})
	e.up.setHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "websocket" {
			conn, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			fmt.Fprint(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
			_ = rw.Flush()
			line, _ := rw.ReadString('\n')
			fmt.Fprint(rw, "echo "+line)
			_ = rw.Flush()
			return
		}
		fmt.Fprint(w, "first\n")
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprint(w, "second\n")
	}))
	req, _ := http.NewRequest("GET", e.gw.URL+"/t9k/notebooks/projects/demo/name/nb/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "first\n" {
		t.Fatalf("first chunk: %q %v", line, err)
	}
	close(release)
	if line, _ := br.ReadString('\n'); line != "second\n" {
		t.Errorf("second chunk: %q", line)
	}
	resp.Body.Close()

	conn, err := net.Dial("tcp", e.gw.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /t9k/notebooks/projects/demo/name/nb/api/kernels/k/channels HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", aliceToken)
	cr := bufio.NewReader(conn)
	ws, err := http.ReadResponse(cr, nil)
	if err != nil || ws.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", ws, err)
	}
	fmt.Fprint(conn, "ping\n")
	if line, err := cr.ReadString('\n'); err != nil || line != "echo ping\n" {
		t.Errorf("over the upgraded connection: %q %v", line, err)
	}
}
