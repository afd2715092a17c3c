//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/accelstack/accelstack/pkg/gateway"
	"github.com/accelstack/accelstack/pkg/gateway/login"
	"github.com/accelstack/accelstack/pkg/webroute"
	"github.com/accelstack/accelstack/test/cluster"
	"github.com/accelstack/accelstack/test/loginclient"
)

// TestAPIKeyPredictsWithCurl: the demo user, logged in, creates an API
// key with the deploy scope; curl with the key gets a prediction of a
// SimpleMLService of their Project at its serving host through the
// gateway; once the key is revoked, curl gets 401.
func TestAPIKeyPredictsWithCurl(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), servingTimeout)
	t.Cleanup(cancel)
	c := crClient(t)
	ns := newProjectE2E(t, c, "0")
	bindDemoUsers(ctx, t, c, ns)
	s := createLinearService(ctx, t, c, ns)

	password, err := clus.DemoPassword()
	if err != nil {
		t.Fatal(err)
	}
	b, err := loginclient.New(cluster.GatewayURL, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the test cluster's gateway
	if err != nil {
		t.Fatal(err)
	}
	_, body, err := b.Login(ctx, login.LoginPath+"?rd="+login.SessionPath, cluster.DemoUser, password)
	var session struct {
		CSRFToken string `json:"csrfToken"`
	}
	if err != nil || json.Unmarshal([]byte(body), &session) != nil || session.CSRFToken == "" {
		t.Fatalf("logging in: %v: %s", err, body)
	}
	keys := func(method, path, body string, want int) string {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, cluster.GatewayURL+gateway.KeysPath+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(login.CSRFHeader, session.CSRFToken)
		resp, out, err := b.Send(req)
		if err != nil || resp.StatusCode != want {
			t.Fatalf("%s %s: %v %v: %s", method, gateway.KeysPath+path, err, resp, out)
		}
		return out
	}
	var key struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	if err := json.Unmarshal([]byte(keys(http.MethodPost, "", `{"name":"curl","scopes":["deploy"]}`, http.StatusCreated)), &key); err != nil || key.Key == "" {
		t.Fatalf("the new key: %+v, %v", key, err)
	}

	host := webroute.ServingHost(cluster.ServingDomain, ns, s.Name)
	// The key goes to curl in a header file, not on its command line.
	header := filepath.Join(t.TempDir(), "header")
	if err := os.WriteFile(header, []byte("Authorization: Bearer "+key.Key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	curl := func() (code int, out string) {
		_, port, _ := strings.Cut(strings.TrimPrefix(cluster.GatewayURL, "https://"), ":")
		cmd := exec.CommandContext(ctx, "curl", "-sk", "--max-time", "30", "-o", "-", "-w", "\n%{http_code}",
			"--resolve", host+":"+port+":"+cluster.GatewayIP, "-H", "@"+header, "-H", "Content-Type: application/json",
			"-d", fmt.Sprintf(`{"instances": %s}`, mustJSON(t, linearInstances)),
			"https://"+host+":"+port+"/v1/models/linear:predict")
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("curl: %v", err)
		}
		// The body, then the status code on the last line.
		text := strings.TrimRight(string(b), "\n")
		i := strings.LastIndex(text, "\n")
		status := text[i+1:]
		if i >= 0 {
			out = text[:i]
		}
		_, _ = fmt.Sscan(status, &code)
		return code, out
	}
	var out prediction
	if code, body := curl(); code != http.StatusOK || json.Unmarshal([]byte(body), &out) != nil || fmt.Sprint(out.Predictions) != fmt.Sprint(linearPredictions) {
		t.Fatalf("curl with the key: %d %s; want the predictions %v", code, body, linearPredictions)
	}

	keys(http.MethodDelete, "/"+key.ID, "", http.StatusNoContent)
	// A revoked key stops working within the gateway's cache time.
	var last string
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(context.Context) (bool, error) {
		code, body := curl()
		last = fmt.Sprint(code, " ", body)
		return code == http.StatusUnauthorized, nil
	})
	if err != nil {
		t.Errorf("curl with the revoked key still answers %s", last)
	}
}

// mustJSON marshals v.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
