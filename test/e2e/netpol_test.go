//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
	"github.com/accelstack/accelstack/pkg/explorer"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/notebook"
)

// The local cluster enforces NetworkPolicies (kube-router's network-policy
// controller, see test/cluster): these helpers check from pods which TCP
// connections a policy lets through. The node itself is always admitted,
// so a check from the host shows that a port listens.

// systemNamespace is the admitted namespace the tests start pods in:
// accelstack-system, whose pods every workload's and Project's policy
// admits.
var systemNamespace = interactive.SystemNamespaces[len(interactive.SystemNamespaces)-1]

const (
	// connectTimeout bounds one connection attempt of a probe.
	connectTimeout = 3 * time.Second
	// admitTries is how often a probe tries an address it should reach
	// before giving up: the enforcer admits a new pod's address once it
	// has seen the pod, which takes it a moment after the pod starts.
	admitTries = 20
)

// reach is what a probe pod expects of an address: admitted (it connects)
// or refused (it cannot).
type reach struct {
	addr     string
	admitted bool
}

// probeReach runs a busybox pod name in ns that tries to open a TCP
// connection to each address, admitted ones first: an admitted address up
// to admitTries times, a second apart, until it connects; then each
// refused one once, so that the enforcer has seen the pod by then. Then it
// runs extra, a shell command (may be empty). It fails the test for each
// address not as expected, and returns the pod's log.
func probeReach(t *testing.T, ns, name string, want []reach, extra string) string {
	t.Helper()
	wait := strconv.Itoa(int(connectTimeout.Seconds()))
	var script strings.Builder
	script.WriteString("try() { nc -w " + wait + " \"$1\" \"$2\" </dev/null >/dev/null 2>&1; }\n")
	for _, admitted := range []bool{true, false} {
		for _, r := range want {
			if r.admitted != admitted {
				continue
			}
			host, port, err := net.SplitHostPort(r.addr)
			if err != nil {
				t.Fatal(err)
			}
			tries := 1
			if admitted {
				tries = admitTries
			}
			fmt.Fprintf(&script, "r=refused; i=0; while [ $i -lt %d ]; do i=$((i+1)); if try %s %s; then r=admitted; break; fi; [ $i -lt %d ] && sleep 1; done; echo \"reach %s $r\"\n",
				tries, host, port, tries, r.addr)
		}
	}
	script.WriteString(extra + "\ntrue\n")
	pod := shellPod(name, script.String(), nil)
	createPod(t, ns, pod)
	t.Cleanup(func() {
		grace := int64(0)
		_ = kube.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	})
	waitPod(t, ns, name, "Succeeded", succeeded)
	logs := podLogs(t, ns, name)
	for _, r := range want {
		wantWord, gotWord := map[bool]string{true: "admitted", false: "refused"}[r.admitted], ""
		for _, line := range strings.Split(logs, "\n") {
			if v, ok := strings.CutPrefix(line, "reach "+r.addr+" "); ok {
				gotWord = v
			}
		}
		if gotWord != wantWord {
			t.Errorf("a pod of %s connecting to %s: %q, want %s\nlog:\n%s", ns, r.addr, gotWord, wantWord, logs)
		}
	}
	return logs
}

// hostConnects reports whether the host (the node, which NetworkPolicies
// do not restrict) opens a TCP connection to addr, trying admitTries
// times a second apart: a pod is Running once its container started,
// which may be a moment before its server listens.
func hostConnects(addr string) bool {
	for i := range admitTries {
		if hostConnectsOnce(addr) {
			return true
		}
		if i < admitTries-1 {
			time.Sleep(time.Second)
		}
	}
	return false
}

// hostConnectsOnce is one try of hostConnects.
func hostConnectsOnce(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, connectTimeout)
	if err == nil {
		conn.Close()
	}
	return err == nil
}

// checkNotebookNetworkPolicy checks the NetworkPolicy of nb, whose Jupyter
// listens on all the pod's addresses: the host reaches Jupyter's own port
// and is answered without a token, a pod of accelstack-system reaches the
// sidecar (and gets 401 without the token) but not Jupyter's port, and a
// pod of another namespace reaches neither.
func checkNotebookNetworkPolicy(ctx context.Context, t *testing.T, nb *tensorstackv1beta1.Notebook) {
	t.Helper()
	ip := notebookPodIP(ctx, t, nb)
	jupyter := net.JoinHostPort(ip, strconv.Itoa(notebook.JupyterPort))
	sidecar := net.JoinHostPort(ip, strconv.Itoa(activity.HTTPPort))
	// Jupyter asks nothing on its own port: only the policy keeps pods off it.
	if code := statusOf(ctx, t, "http://"+jupyter+notebook.URLPrefix(nb.Namespace, nb.Name)+"api/status", nil); code != 200 {
		t.Fatalf("the host asking Jupyter's own port %s: %d, want 200 (the port must listen for this check to mean anything)", jupyter, code)
	}
	logs := probeReach(t, systemNamespace, "nb-admitted-"+nb.Namespace, []reach{{sidecar, true}, {jupyter, false}},
		"wget -O- http://"+sidecar+"/ 2>&1")
	if !strings.Contains(logs, "401 Unauthorized") {
		t.Errorf("a pod of %s asking the sidecar without the token got:\n%s\nwant 401 Unauthorized", systemNamespace, logs)
	}
	other := newNamespace(t)
	probeReach(t, other, "intruder", []reach{{jupyter, false}, {sidecar, false}}, "")
}

// checkExplorerNetworkPolicy checks the NetworkPolicies of ex's
// components: a pod of accelstack-system reaches code-server's sidecar,
// which answers 401 and nothing of code-server without the token, but not
// code-server's own port; a pod of another namespace reaches neither
// component's sidecar nor code-server's port.
func checkExplorerNetworkPolicy(ctx context.Context, t *testing.T, ex *tensorstackv1beta1.Explorer) {
	t.Helper()
	port := func(comp explorer.Component, p int) string {
		return net.JoinHostPort(explorerPodIP(ctx, t, ex, comp), strconv.Itoa(p))
	}
	codeSidecar, fileSidecar := port(explorer.CodeServer, activity.HTTPPort), port(explorer.FileBrowser, activity.HTTPPort)
	codeServer := port(explorer.CodeServer, explorer.CodeServerPort)
	// code-server binds the pod's loopback as well: not even the host
	// reaches its port.
	t.Logf("the host connects to code-server's own port %s: %v", codeServer, hostConnectsOnce(codeServer))
	logs := probeReach(t, systemNamespace, "ex-admitted-"+ex.Namespace, []reach{{codeSidecar, true}, {codeServer, false}},
		"wget -O- http://"+codeSidecar+"/ 2>&1")
	if !strings.Contains(logs, "401 Unauthorized") || strings.Contains(logs, explorer.MountPath) {
		t.Errorf("a pod of %s asking code-server without the token got:\n%s\nwant 401 Unauthorized and nothing of code-server", systemNamespace, logs)
	}
	other := newNamespace(t)
	probeReach(t, other, "intruder", []reach{{codeSidecar, false}, {fileSidecar, false}, {codeServer, false}}, "")
}

// checkTriggerNetworkPolicy checks the NetworkPolicy of the trigger of ns
// that the listener at listenerIP has delivered an event to (which shows
// that the listener's pods reach it): the host reaches the trigger's port,
// and a pod of the same namespace reaches the listener but not the
// trigger.
func checkTriggerNetworkPolicy(t *testing.T, c client.Client, ns, listenerIP string) {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(testContext(t), &pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/component": "workflow-trigger"}); err != nil {
		t.Fatal(err)
	}
	trigger := ""
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && running(&p) && p.Status.PodIP != "" {
			trigger = net.JoinHostPort(p.Status.PodIP, strconv.Itoa(serverconfig.Port))
		}
	}
	if trigger == "" {
		t.Fatalf("no running trigger pod in %s (%d pods)", ns, len(pods.Items))
	}
	if !hostConnects(trigger) {
		t.Fatalf("the host cannot connect to the trigger at %s: the check below would mean nothing", trigger)
	}
	listener := net.JoinHostPort(listenerIP, strconv.Itoa(serverconfig.Port))
	probeReach(t, ns, "intruder", []reach{{listener, true}, {trigger, false}}, "")
}

// TestProjectNetworkPolicy: a pod of a Project (its default
// NetworkPolicy) is reached by pods of the Project and of
// accelstack-system, and not by a pod of another namespace.
func TestProjectNetworkPolicy(t *testing.T) {
	t.Parallel()
	c := crClient(t)
	ns := newProjectE2E(t, c, "0")
	createPod(t, ns, shellPod("server", "mkdir -p /w && echo ok > /w/index.html && exec httpd -f -p 8080 -h /w", nil))
	pod := waitPod(t, ns, "server", "Running", running)
	addr := net.JoinHostPort(pod.Status.PodIP, "8080")
	if !hostConnects(addr) {
		t.Fatalf("the host cannot connect to the project's pod at %s: the checks below would mean nothing", addr)
	}
	probeReach(t, systemNamespace, "project-admitted-"+ns, []reach{{addr, true}}, "")
	probeReach(t, ns, "neighbour", []reach{{addr, true}}, "")
	probeReach(t, newNamespace(t), "intruder", []reach{{addr, false}}, "")
}
