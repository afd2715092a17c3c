//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/websocket"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/notebook"
	"github.com/accelstack/accelstack/pkg/reclaim"
	"github.com/accelstack/accelstack/test/cluster"
)

// The Resource Keeper's thresholds of the test's namespace: the least it
// accepts (reclaim.MinDuration). The local cluster's Keeper probes every
// 5s (test/cluster/manifests/controllers.yaml).
const (
	nbIdleAfter    = time.Minute
	nbSuspendAfter = time.Minute
	// nbBusyFor is how long the test's kernel computes: longer than
	// idle-after, so that only the busy kernel keeps the notebook active.
	nbBusyFor = nbIdleAfter + 20*time.Second
	// nbTimeout bounds the whole test: readiness, the busy kernel,
	// idle-after, suspend-after and the resumption.
	nbTimeout = 12 * time.Minute
	// kernelQuiet is how long a kernel publishes nothing before the test
	// executes on it: long enough for the server's last kernel_info
	// requests to have been answered.
	kernelQuiet = 3 * time.Second
)

// TestNotebookIdleReclaim runs Jupyter in a Notebook, reaches it through
// its sidecar under the Notebook's URL prefix, keeps a kernel busy, opts
// the namespace in to the Resource Keeper, and checks that the Notebook
// stays active past idle-after meanwhile; then lets it go Idle,
// watches the Keeper suspend it, and resumes it.
func TestNotebookIdleReclaim(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), nbTimeout)
	t.Cleanup(cancel)
	c := crClient(t)
	ns := newNamespace(t)

	nb := &tensorstackv1beta1.Notebook{
		ObjectMeta: metav1.ObjectMeta{Name: "idle", Namespace: ns},
		Spec:       tensorstackv1beta1.NotebookSpec{Template: tensorstackv1beta1.NotebookTemplateSpec{Spec: jupyterPodSpec()}},
	}
	if err := c.Create(ctx, nb); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	nb = waitNotebook(ctx, t, c, nb, "Ready", notebookReady)
	t.Logf("notebook Ready after %s: %s", round(time.Since(start)), nb.Status.URL)

	prefix := notebook.URLPrefix(ns, nb.Name)
	if want := notebook.URL("", nb); nb.Status.URL != want {
		t.Errorf("status.url %q, want %q", nb.Status.URL, want)
	}
	u, err := url.Parse(nb.Status.URL)
	if err != nil || u.Path != prefix {
		t.Errorf("status.url %q does not serve under %s: %v", nb.Status.URL, prefix, err)
	}
	// No kube-proxy: the Service's port 80 leads to the sidecar's 8080 on
	// the pod, which the host reaches directly.
	// The host is not the pod's loopback: it sends the access token.
	base := "http://" + notebookPodIP(ctx, t, nb) + ":8080" + prefix
	token := accessToken(ctx, t, ns, notebook.ObjectName(nb.UID))
	// Without it, the sidecar refuses, and no kernel can be started.
	if code := statusOf(ctx, t, base+"api/kernels", nil); code != http.StatusUnauthorized {
		t.Errorf("GET %sapi/kernels without the access token: %d, want 401", base, code)
	}
	var status map[string]any
	jupyterAPI(ctx, t, http.MethodGet, base+"api/status", token, nil, http.StatusOK, &status)
	if _, ok := status["started"]; !ok {
		t.Fatalf("GET %sapi/status: %v, not Jupyter's status", base, status)
	}
	// Pods: only those of the platform's namespaces reach the sidecar,
	// and none Jupyter's own port.
	checkNotebookNetworkPolicy(ctx, t, nb)

	// A kernel computing for nbBusyFor, started by a request over its
	// channels' websocket as a browser would.
	var kernel struct {
		ID string `json:"id"`
	}
	jupyterAPI(ctx, t, http.MethodPost, base+"api/kernels", token, strings.NewReader(`{"name":"python3"}`), http.StatusCreated, &kernel)
	ws := executeOnKernel(ctx, t, base, token, kernel.ID, fmt.Sprintf("import time; time.sleep(%d)", int(nbBusyFor.Seconds())))
	busySince := time.Now()
	// Opted in only now: a loaded node may take more than idle-after to
	// get Jupyter Ready, and the Keeper would find it Idle before the
	// kernel ran.
	optInResourceKeeper(t, ns, nbIdleAfter, nbSuspendAfter)
	t.Logf("kernel %s busy for %s; namespace opted in", kernel.ID, nbBusyFor)

	// Active while the kernel computes, past idle-after since the last
	// request (the websocket's message) and the pod's start.
	sawBusy := ""
	watchUntil := busySince.Add(nbIdleAfter + 15*time.Second)
	for time.Now().Before(watchUntil) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(nb), nb); err != nil {
			t.Fatal(err)
		}
		if idle := idleCondition(nb); idle != nil {
			if idle.Status == corev1.ConditionTrue {
				t.Fatalf("Idle %s after %s while the kernel computes: %s", idle.Reason, round(time.Since(busySince)), idle.Message)
			}
			if idle.Status == corev1.ConditionFalse && strings.Contains(idle.Message, "kernel(s) busy") {
				sawBusy = idle.Message
			}
		}
		time.Sleep(2 * time.Second)
	}
	if sawBusy == "" {
		t.Fatalf("the Keeper never saw the busy kernel; Idle condition: %+v", idleCondition(nb))
	}
	t.Logf("not Idle for %s while the kernel computed: %s", round(time.Since(busySince)), sawBusy)
	if err := ws.Close(); err != nil {
		t.Logf("closing the kernel's websocket: %v", err)
	}

	// Idle once the kernel is done and idle-after has passed, then
	// suspended after suspend-after.
	nb = waitNotebook(ctx, t, c, nb, "Idle", func(nb *tensorstackv1beta1.Notebook) bool {
		idle := idleCondition(nb)
		return idle != nil && idle.Status == corev1.ConditionTrue
	})
	idle := idleCondition(nb)
	t.Logf("Idle %s after %s: %s", idle.Reason, round(time.Since(busySince)), idle.Message)
	for _, evidence := range []string{"no request for", "kernels idle", "Jupyter last active"} {
		if !strings.Contains(idle.Message, evidence) {
			t.Errorf("the Idle message does not name %q: %s", evidence, idle.Message)
		}
	}
	idleSince := time.Now()
	nb = waitNotebook(ctx, t, c, nb, "suspended", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Spec.Suspend && nb.Status.Phase == tensorstackv1beta1.NotebookSuspended
	})
	t.Logf("suspended %s after Idle: %s", round(time.Since(idleSince)), idleCondition(nb).Message)
	if idle := idleCondition(nb); idle == nil || idle.Status != corev1.ConditionTrue || idle.Reason != reclaim.ReasonSuspended {
		t.Errorf("Idle condition of the suspended notebook: %+v", idle)
	}
	waitNotebookPodGone(ctx, t, nb)
	checkKeeperEvents(ctx, t, ns, nb.Name, reclaim.EventReasonIdle, reclaim.EventReasonSuspended)

	// Resumed, the new pod's start is activity.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(nb), nb); err != nil {
			return err
		}
		nb.Spec.Suspend = false
		return c.Update(ctx, nb)
	})
	if err != nil {
		t.Fatalf("resuming: %v", err)
	}
	resumed := time.Now()
	nb = waitNotebook(ctx, t, c, nb, "Ready and not Idle after resuming", func(nb *tensorstackv1beta1.Notebook) bool {
		idle := idleCondition(nb)
		return notebookReady(nb) && idle != nil && idle.Status == corev1.ConditionFalse
	})
	t.Logf("resumed, Ready and active after %s: %s", round(time.Since(resumed)), idleCondition(nb).Message)
	jupyterAPI(ctx, t, http.MethodGet, "http://"+notebookPodIP(ctx, t, nb)+":8080"+prefix+"api/status", token, nil, http.StatusOK, &status)
}

// optInResourceKeeper opts ns in to the Resource Keeper with the
// thresholds.
func optInResourceKeeper(t *testing.T, ns string, idleAfter, suspendAfter time.Duration) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels": map[string]string{reclaim.EnabledLabelKey: "enabled"},
		"annotations": map[string]string{
			reclaim.IdleAfterAnnotationKey:    idleAfter.String(),
			reclaim.SuspendAfterAnnotationKey: suspendAfter.String(),
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Namespaces().Patch(testContext(t), ns, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// jupyterPodSpec runs Jupyter Notebook of cluster.NotebookImage on
// 0.0.0.0:8888 under $NB_PREFIX, which the controller sets, without a
// token: the image runs as root, with its HOME in /tmp.
func jupyterPodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](2),
		Containers: []corev1.Container{{
			Name: tensorstackv1beta1.NotebookContainer, Image: cluster.NotebookImage, ImagePullPolicy: corev1.PullNever,
			Command: []string{"jupyter-notebook"},
			Args: []string{
				"--ip=0.0.0.0", "--port=8888", "--no-browser", "--allow-root",
				"--NotebookApp.base_url=$(NB_PREFIX)",
				"--NotebookApp.token=", "--NotebookApp.password=",
				// Without a token, Jupyter asks API clients for an XSRF
				// cookie; the test's client is no browser.
				"--NotebookApp.disable_check_xsrf=True",
			},
			Env: []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}},
		}},
	}
}

// notebookReady says whether nb runs and its Ready condition is True.
func notebookReady(nb *tensorstackv1beta1.Notebook) bool {
	if nb.Status.Phase != tensorstackv1beta1.NotebookRunning {
		return false
	}
	for _, c := range nb.Status.Conditions {
		if c.Type == tensorstackv1beta1.ConditionReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// idleCondition returns nb's Idle condition, or nil.
func idleCondition(nb *tensorstackv1beta1.Notebook) *tensorstackv1beta1.WorkloadCondition {
	for i, c := range nb.Status.Conditions {
		if c.Type == tensorstackv1beta1.ConditionIdle {
			return &nb.Status.Conditions[i]
		}
	}
	return nil
}

// waitNotebook polls nb until done, and fails the test with nb's status
// when ctx ends first.
func waitNotebook(ctx context.Context, t *testing.T, c client.Client, nb *tensorstackv1beta1.Notebook, what string,
	done func(*tensorstackv1beta1.Notebook) bool) *tensorstackv1beta1.Notebook {
	t.Helper()
	got := &tensorstackv1beta1.Notebook{}
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if lastErr = c.Get(ctx, client.ObjectKeyFromObject(nb), got); lastErr != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		if got.Status.Phase == tensorstackv1beta1.NotebookFailed {
			return false, fmt.Errorf("the notebook failed")
		}
		return done(got), nil
	})
	if err != nil {
		status, _ := json.MarshalIndent(got.Status, "", "  ")
		logs := ""
		if pod := got.Status.Pod; pod != nil {
			logs = podLogsOf(t, nb.Namespace, pod.Reference.Name, tensorstackv1beta1.NotebookContainer)
		}
		t.Fatalf("Notebook %s never %s: %v (last error %v)\nsuspend %v, status %s\nlogs:\n%s", nb.Name, what, err, lastErr,
			got.Spec.Suspend, status, logs)
	}
	return got
}

// podLogsOf returns the logs of container of pod, or why there are none.
func podLogsOf(t *testing.T, ns, pod, container string) string {
	t.Helper()
	out, err := kube.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).Do(context.Background()).Raw()
	if err != nil {
		return err.Error()
	}
	return string(out)
}

// notebookPodIP returns the IP of nb's pod.
func notebookPodIP(ctx context.Context, t *testing.T, nb *tensorstackv1beta1.Notebook) string {
	t.Helper()
	pod, err := kube.CoreV1().Pods(nb.Namespace).Get(ctx, notebook.PodName(notebook.ObjectName(nb.UID)), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Status.PodIP == "" {
		t.Fatalf("pod %s has no IP", pod.Name)
	}
	return pod.Status.PodIP
}

// waitNotebookPodGone waits until nb's pod is deleted.
func waitNotebookPodGone(ctx context.Context, t *testing.T, nb *tensorstackv1beta1.Notebook) {
	t.Helper()
	name := notebook.PodName(notebook.ObjectName(nb.UID))
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().Pods(nb.Namespace).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("pod %s of the suspended notebook still there: %v", name, err)
	}
}

// checkKeeperEvents checks that the Keeper recorded an event of each
// reason on the Notebook name.
func checkKeeperEvents(ctx context.Context, t *testing.T, ns, name string, reasons ...string) {
	t.Helper()
	events, err := kube.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, reason := range reasons {
		found := false
		for _, e := range events.Items {
			if e.Regarding.Kind == "Notebook" && e.Regarding.Name == name && e.Reason == reason {
				t.Logf("event %s: %s", reason, e.Note)
				found = true
			}
		}
		if !found {
			t.Errorf("no event %s on Notebook %s", reason, name)
		}
	}
}

// jupyterAPI sends a request to Jupyter's REST API through the sidecar,
// with the notebook's access token, and decodes the answer of status want
// into out.
func jupyterAPI(ctx context.Context, t *testing.T, method, url, token string, body io.Reader, want int, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %s, want %d: %s", method, url, resp.Status, want, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s %s: %v: %s", method, url, err, b)
	}
}

// executeOnKernel sends code to the kernel id in an execute_request over
// its channels' websocket (through the sidecar at base, with the access
// token), as Jupyter's front ends do, and reads the
// kernel's messages until the websocket closes, answering pings. The
// websocket is closed at the latest when the test ends.
//
// Like JupyterLab on connecting, it first asks the kernel for its info,
// here on the control channel as well as the shell, and waits for each
// reply and for the kernel's idle status after it, then until the kernel
// has published nothing for kernelQuiet. Jupyter's server (notebook 6)
// takes the state it reports from every status message, whatever request
// it answers, and the kernel's control thread answers while the shell
// executes: an idle landing after the execution's busy leaves the server
// reporting an idle kernel for the whole execution. Besides the test's own
// requests, the server sends kernel_info requests of its own when a
// websocket opens (its "nudges"), every half second until one is answered,
// over channels of their own: the kernel may take the last of them after
// the test's, so only a quiet kernel has answered them all. Status
// messages answering other requests during the execution are logged.
func executeOnKernel(ctx context.Context, t *testing.T, base, token, id, code string) *websocket.Conn {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	wsURL := "ws://" + u.Host + u.Path + "api/kernels/" + id + "/channels"
	// Jupyter takes a websocket whose Origin is the Host it was sent to.
	cfg, err := websocket.NewConfig(wsURL, "http://"+u.Host)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Header = bearer(token)
	dialCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ws, err := cfg.DialContext(dialCtx)
	if err != nil {
		t.Fatalf("websocket %s: %v", wsURL, err)
	}
	session := randomHex(t)
	send := func(channel, msgType string, content map[string]any) string {
		t.Helper()
		msgID := randomHex(t)
		msg := map[string]any{
			"header": map[string]any{
				"msg_id": msgID, "session": session, "username": "e2e", "msg_type": msgType,
				"version": "5.3", "date": time.Now().UTC().Format(time.RFC3339Nano),
			},
			"parent_header": map[string]any{},
			"metadata":      map[string]any{},
			"content":       content,
			"channel":       channel,
			"buffers":       []any{},
		}
		if err := websocket.JSON.Send(ws, msg); err != nil {
			ws.Close()
			t.Fatalf("sending the %s on %s: %v", msgType, channel, err)
		}
		return msgID
	}
	// settled carries the parents' msg_ids of the kernel_info replies and
	// of the idle statuses; heard is signalled on every message; execID is
	// the execute_request's msg_id once it is sent.
	settled := make(chan string, 64)
	heard := make(chan struct{}, 1)
	var execID atomic.Value
	execID.Store("")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var m struct {
				Header struct {
					MsgType string `json:"msg_type"`
				} `json:"header"`
				ParentHeader struct {
					MsgID   string `json:"msg_id"`
					MsgType string `json:"msg_type"`
				} `json:"parent_header"`
				Content json.RawMessage `json:"content"`
			}
			if err := websocket.JSON.Receive(ws, &m); err != nil {
				return
			}
			select {
			case heard <- struct{}{}:
			default:
			}
			var status struct {
				ExecutionState string `json:"execution_state"`
			}
			switch m.Header.MsgType {
			case "status":
				if json.Unmarshal(m.Content, &status) != nil {
					continue
				}
				if exec := execID.Load().(string); exec != "" && m.ParentHeader.MsgID != exec {
					t.Logf("kernel %s: status %s answering a %s during the execution", id, status.ExecutionState, m.ParentHeader.MsgType)
				}
				if status.ExecutionState != "idle" {
					continue
				}
				fallthrough
			case "kernel_info_reply":
				select {
				case settled <- m.ParentHeader.MsgID:
				default:
				}
			case "execute_reply", "error":
				t.Logf("kernel %s: %s %s", id, m.Header.MsgType, m.Content)
			}
		}
	}()
	t.Cleanup(func() {
		ws.Close()
		<-done
	})

	// Each request waits for its reply and its idle status.
	pending := map[string]int{
		send("control", "kernel_info_request", map[string]any{}): 2,
		send("shell", "kernel_info_request", map[string]any{}):   2,
	}
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	for len(pending) > 0 {
		select {
		case parent := <-settled:
			if _, ok := pending[parent]; !ok {
				continue
			}
			if pending[parent]--; pending[parent] == 0 {
				delete(pending, parent)
			}
		case <-done:
			t.Fatalf("kernel %s: the websocket closed before its kernel_info replies", id)
		case <-timeout.C:
			t.Fatalf("kernel %s: kernel_info requests %v not settled within a minute", id, pending)
		}
	}
	quiet := time.NewTimer(kernelQuiet)
	defer quiet.Stop()
	for waiting := true; waiting; {
		select {
		case <-heard:
			quiet.Reset(kernelQuiet)
		case <-quiet.C:
			waiting = false
		case <-done:
			t.Fatalf("kernel %s: the websocket closed before the kernel was quiet", id)
		case <-timeout.C:
			t.Fatalf("kernel %s: never quiet for %s within a minute", id, kernelQuiet)
		}
	}
	execID.Store(send("shell", "execute_request", map[string]any{
		"code": code, "silent": false, "store_history": false, "user_expressions": map[string]any{},
		"allow_stdin": false, "stop_on_error": true,
	}))
	return ws
}

// randomHex returns 16 random hex digits.
func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
