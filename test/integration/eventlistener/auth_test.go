package eventlistener

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener"
	"github.com/accelstack/accelstack/pkg/eventlistener/server"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
	"github.com/accelstack/accelstack/test/testutil"
)

// testListenerAuth: a listener with auth mounts its Secret (the secret is
// in no field of its Deployment or status), and its server, given the
// mounted file, answers 401 to requests without the secret, which start
// no run, and delivers signed ones.
func (e *env) testListenerAuth(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	const secret = "correct horse battery staple"
	e.runnerAccount(ctx, t, ns)
	testutil.MustCreate(ctx, t, e.c, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "github-webhook"},
		Data:       map[string][]byte{"token": []byte(secret)},
	})
	el := listener(ns, "event-listener-sample")
	el.Spec.Auth = &triggersv1beta1.EventListenerAuth{SecretName: "github-webhook"}
	testutil.MustCreate(ctx, t, e.c, el)
	wt := trigger(ns, "workflow-trigger-sample", triggersv1beta1.EventSource{EventListenerName: el.Name})
	testutil.MustCreate(ctx, t, e.c, wt)

	dep := e.waitDeployment(ctx, t, ns, eventlistener.ListenerObjectName(el.Name, el.UID))
	var file string
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == "github-webhook" && len(v.Secret.Items) == 1 && v.Secret.Items[0].Key == "token" {
			file = v.Secret.Items[0].Path
		}
	}
	path, _ := envValue(dep, serverconfig.EnvSecretFile)
	if file == "" || filepath.Base(path) != file {
		t.Fatalf("volumes %+v and %s=%q, want the Secret's token mounted and named", dep.Spec.Template.Spec.Volumes, serverconfig.EnvSecretFile, path)
	}
	// The controller has written the status: the Deployment is not available.
	e.waitListenerReady(ctx, t, ns, el.Name, corev1.ConditionUnknown)
	stored := &triggersv1beta1.EventListener{}
	e.get(ctx, t, ns, el.Name, stored)
	for what, obj := range map[string]any{"Deployment": dep, "EventListener": stored} {
		if b, _ := json.Marshal(obj); strings.Contains(string(b), secret) {
			t.Errorf("the %s holds the secret", what)
		}
	}

	// The listener server as the pod runs it, the Secret's key as the
	// kubelet mounts it.
	mounted := filepath.Join(t.TempDir(), file)
	if err := os.WriteFile(mounted, []byte(secret), 0o400); err != nil {
		t.Fatal(err)
	}
	triggerSrv := httptest.NewServer(mustHandler(t, e.triggerServer(ctx, t, wt)))
	defer triggerSrv.Close()
	lcfg := server.DefaultListenerConfig()
	lcfg.Namespace, _ = envValue(dep, serverconfig.EnvListenerNamespace)
	lcfg.Name, _ = envValue(dep, serverconfig.EnvListenerName)
	lcfg.Subscribers, lcfg.SecretFile = []string{triggerSrv.URL}, mounted
	sender, err := server.NewSender(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l, err := server.NewListener(lcfg, sender)
	if err != nil {
		t.Fatal(err)
	}
	const body = `{"hello": "world"}`
	post := func(header, value string) int {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, serverconfig.Source(ns, el.Name), strings.NewReader(body))
		if header != "" {
			r.Header.Set(header, value)
		}
		w := httptest.NewRecorder()
		l.ServeHTTP(w, r)
		return w.Code
	}
	for name, code := range map[string]int{
		"unsigned":     post("", ""),
		"wrong token":  post(server.GitLabTokenHeader, "guess"),
		"forged HMAC":  post(server.GitHubSignatureHeader, server.Sign([]byte("guess"), []byte(body))),
		"signed":       post(server.GitHubSignatureHeader, server.Sign([]byte(secret), []byte(body))),
		"GitLab token": post(server.GitLabTokenHeader, secret),
	} {
		want := http.StatusUnauthorized
		if name == "signed" || name == "GitLab token" {
			want = http.StatusOK
		}
		if code != want {
			t.Errorf("%s: %d, want %d", name, code, want)
		}
	}
	l.Close(ctx)
	runs := e.runs(ctx, t, ns)
	if len(runs) != 2 {
		t.Errorf("%d runs, want 2: one per request with the secret", len(runs))
	}
	for _, r := range runs {
		if b, _ := json.Marshal(r); strings.Contains(string(b), secret) {
			t.Errorf("run %s holds the secret", r.Name)
		}
	}
}

// mustHandler returns the CloudEvents handler of tr.
func mustHandler(t *testing.T, tr *server.Trigger) http.Handler {
	t.Helper()
	h, err := tr.Handler(testutil.SubtestContext(t), server.DefaultMaxEventBytes)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
