//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/explorer"
	"github.com/accelstack/accelstack/pkg/gateway"
	"github.com/accelstack/accelstack/pkg/gateway/login"
	"github.com/accelstack/accelstack/test/cluster"
	"github.com/accelstack/accelstack/test/loginclient"
)

// TestGatewayOpensExplorer reaches an Explorer of a Project through the
// gateway as deploy/ installs it: a member of the Project, with a
// ServiceAccount token, lists the PVC through code-server and the file
// browser; without a token the gateway answers 401, and a user of another
// namespace gets 403. The gateway finds the Explorer's pods by their
// Service's EndpointSlices and passes the Project's NetworkPolicy, which
// admits accelstack-system.
func TestGatewayOpensExplorer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	t.Cleanup(cancel)
	c := crClient(t)
	ns := newProjectE2E(t, c, "0")
	class := "csi-s3"
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "work"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			StorageClassName: &class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if err := c.Create(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	ex := &tensorstackv1beta1.Explorer{
		ObjectMeta: metav1.ObjectMeta{Name: "files", Namespace: ns},
		Spec:       tensorstackv1beta1.ExplorerSpec{StorageType: tensorstackv1beta1.StorageTypePVC, StorageName: pvc.Name},
	}
	if err := c.Create(ctx, ex); err != nil {
		t.Fatal(err)
	}
	ex = waitExplorerRunning(ctx, t, c, ex)

	member := serviceAccountToken(ctx, t, c, ns, "member", "accelstack-project-member")
	outsider := serviceAccountToken(ctx, t, c, newNamespace(t), "outsider", "")
	gw := "https://" + gatewayAddress(ctx, t, c)

	var folder struct {
		Folder string `json:"folder"`
	}
	codeServer := gw + explorer.URLPrefix(ns, ex.Name, explorer.CodeServer)
	// The Project's RoleBindings and the Explorer's endpoints may take a
	// moment to be seen: retry until the gateway answers 200.
	if body := gatewayGet(ctx, t, codeServer, member, http.StatusOK, true); json.Unmarshal([]byte(body), &folder) != nil || folder.Folder != explorer.MountPath {
		t.Errorf("code-server through the gateway answered %s, want the folder %s", body, explorer.MountPath)
	}
	var listing struct {
		Items []json.RawMessage `json:"items"`
	}
	if body := gatewayGet(ctx, t, gw+explorer.URLPrefix(ns, ex.Name, explorer.FileBrowser)+"api/resources/", member, http.StatusOK, true); json.Unmarshal([]byte(body), &listing) != nil {
		t.Errorf("the file browser through the gateway answered %s", body)
	}
	gatewayGet(ctx, t, codeServer, "", http.StatusUnauthorized, false)
	gatewayGet(ctx, t, codeServer, outsider, http.StatusForbidden, false)

	t.Run("the demo user logs in with a browser and opens the Explorer", func(t *testing.T) {
		bindDemoUsers(ctx, t, c, ns)
		password, err := clus.DemoPassword()
		if err != nil {
			t.Fatal(err)
		}
		b, err := loginclient.New(cluster.GatewayURL, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test cluster's self-signed gateway
		if err != nil {
			t.Fatal(err)
		}
		target := explorer.URLPrefix(ns, ex.Name, explorer.CodeServer)
		// Hydra may still be starting, and the gateway registering its
		// client: retry the whole login until it opens the Explorer.
		var resp *http.Response
		var body string
		err = wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
			b.Jar, _ = cookiejar.New(nil)
			var lerr error
			if resp, body, lerr = b.Login(ctx, target, cluster.DemoUser, password); lerr != nil {
				t.Logf("login: %v", lerr)
				return false, nil //nolint:nilerr // retried until the timeout
			}
			return resp.StatusCode == http.StatusOK, nil
		})
		if err != nil || json.Unmarshal([]byte(body), &folder) != nil || folder.Folder != explorer.MountPath {
			t.Fatalf("logging in as %s and opening %s: %v, last answer %v: %s", cluster.DemoUser, target, err, resp, body)
		}
		if resp.Request.URL.String() != cluster.GatewayURL+target {
			t.Errorf("the login ended at %s, want %s", resp.Request.URL, cluster.GatewayURL+target)
		}
		resp, body, err = b.Get(ctx, login.SessionPath)
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(body, `"user":"`+cluster.DemoUser+`"`) {
			t.Errorf("the session: %v %v %s", err, resp, body)
		}
	})

	t.Run("the demo user's ID token works with the API server and the gateway", func(t *testing.T) {
		idToken := demoIDToken(ctx, t, c)
		cfg, err := clus.RESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		cfg = rest.AnonymousClientConfig(cfg)
		cfg.BearerToken = idToken
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("the API server refused the ID token: %v", err)
		}
		if u := review.Status.UserInfo; u.Username != cluster.DemoUser || !slices.Contains(u.Groups, cluster.DemoGroup) {
			t.Errorf("the API server sees %+v, want %s in %s", u, cluster.DemoUser, cluster.DemoGroup)
		}
		// The gateway reviews the token with the API server, as any other.
		gatewayGet(ctx, t, cluster.GatewayURL+explorer.URLPrefix(ns, ex.Name, explorer.CodeServer), idToken, http.StatusOK, true)
	})
}

// bindDemoUsers makes the group of the demo user the install created a
// member of the Project ns; the user's session and ID token carry it.
func bindDemoUsers(ctx context.Context, t *testing.T, c client.Client, ns string) {
	t.Helper()
	if err := c.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo-users"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "accelstack-project-member"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: cluster.DemoGroup}},
	}); err != nil {
		t.Fatal(err)
	}
}

// demoIDToken returns an ID token of the demo user for the gateway's
// client, as a command-line login would get one: the authorization-code
// flow through the gateway's login form, the code redeemed with the
// client's secret (from the login Secret the gateway created).
func demoIDToken(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	password, err := clus.DemoPassword()
	if err != nil {
		t.Fatal(err)
	}
	var secret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: "gateway-login"}, &secret); err != nil {
		t.Fatal(err)
	}
	insecure := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the test cluster's gateway, whose CA the test does not read
	oc := oauth2.Config{
		ClientID: cluster.OIDCClientID, ClientSecret: string(secret.Data[gateway.ClientSecretKey]),
		Endpoint:    oauth2.Endpoint{AuthURL: cluster.OIDCIssuer + "/oauth2/auth", TokenURL: cluster.OIDCIssuer + "/oauth2/token", AuthStyle: oauth2.AuthStyleInHeader},
		RedirectURL: cluster.GatewayURL + login.CallbackPath,
		Scopes:      []string{"openid", "groups"},
	}
	b, err := loginclient.New(cluster.GatewayURL, insecure)
	if err != nil {
		t.Fatal(err)
	}
	authURL := oc.AuthCodeURL(randomHex(t), oauth2.SetAuthURLParam("nonce", randomHex(t)))
	code, err := b.AuthorizationCode(ctx, authURL, oc.RedirectURL, cluster.DemoUser, password)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: insecure}}
	tok, err := oc.Exchange(context.WithValue(ctx, oauth2.HTTPClient, hc), code)
	if err != nil {
		t.Fatalf("redeeming the code: %v", err)
	}
	idToken, _ := tok.Extra("id_token").(string)
	if idToken == "" {
		t.Fatal("the token response has no id_token")
	}
	return idToken
}

// serviceAccountToken creates the ServiceAccount name of ns, binds it the
// ClusterRole role there unless role is "", and returns a token of it.
func serviceAccountToken(ctx context.Context, t *testing.T, c client.Client, ns, name, role string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	if role != "" {
		if err := c.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	req := &authenticationv1.TokenRequest{}
	if err := c.SubResource("token").Create(ctx, sa, req); err != nil {
		t.Fatalf("a token of %s/%s: %v", ns, name, err)
	}
	return req.Status.Token
}

// gatewayAddress returns the address of the running gateway pod's HTTPS
// port: the host reaches pods directly.
func gatewayAddress(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	var addr string
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(cluster.Namespace), client.MatchingLabels{"app.kubernetes.io/name": "gateway"}); err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		i := slices.IndexFunc(pods.Items, func(p corev1.Pod) bool { return running(&p) && p.Status.PodIP != "" })
		if i >= 0 {
			addr = net.JoinHostPort(pods.Items[i].Status.PodIP, "8443")
		}
		return i >= 0, nil
	})
	if err != nil {
		t.Fatalf("no running gateway pod: %v", err)
	}
	return addr
}

// gatewayGet GETs url from the gateway with the bearer token (none when
// ""), retrying until it answers want when retry is set, and returns the
// body; another answer fails the test. The gateway's certificate is its
// self-signed one.
func gatewayGet(ctx context.Context, t *testing.T, url, token string, want int, retry bool) string {
	t.Helper()
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the test cluster's self-signed gateway
	}}
	var code int
	var body string
	get := func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			body = err.Error()
			return false, nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		code, body = resp.StatusCode, string(b)
		return code == want, nil
	}
	if retry {
		if err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, get); err != nil {
			t.Fatalf("GET %s through the gateway: %d %s, want %d", url, code, body, want)
		}
		return body
	}
	if ok, err := get(ctx); err != nil || !ok {
		t.Errorf("GET %s through the gateway: %d %s (%v), want %d", url, code, body, err, want)
	}
	return body
}
