//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/t9kcli"
	"github.com/accelstack/accelstack/pkg/t9kpf"
	"github.com/accelstack/accelstack/test/cluster"
)

// TestPortForwardNotebookSSH: the demo user logs in with t9k config auth
// (user name and password, through the gateway), lists their project's
// Notebooks with t9k through the gateway, opens t9k-pf notebook on the
// Notebook's page URL, and ssh through the forwarded port runs a command
// in the Notebook's pod. t9k-pf to a project the user is no member of is
// refused.
func TestPortForwardNotebookSSH(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	c := crClient(t)
	ns := newProjectE2E(t, c, "0")
	bindDemoUsers(ctx, t, c, ns)
	dir := t.TempDir()

	// The user's key pair, and its public key as an SSH Public Key Secret.
	key := filepath.Join(dir, "id_ed25519")
	if out, err := exec.CommandContext(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo-key", Labels: map[string]string{"tensorstack.dev/resource": "ssh"}},
		Data:       map[string][]byte{"ssh-publickey": pub},
	}); err != nil {
		t.Fatal(err)
	}
	nb := &tensorstackv1beta1.Notebook{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "remote"},
		Spec: tensorstackv1beta1.NotebookSpec{
			Type:     tensorstackv1beta1.NotebookJupyter,
			SSH:      &tensorstackv1beta1.NotebookSSHSpec{Enabled: true, AuthorizedKeys: []string{"demo-key"}},
			Template: tensorstackv1beta1.NotebookTemplateSpec{Spec: sshdPodSpec()},
		},
	}
	if err := c.Create(ctx, nb); err != nil {
		t.Fatal(err)
	}
	running := waitNotebook(ctx, t, c, nb, "ran its pod", func(nb *tensorstackv1beta1.Notebook) bool {
		return nb.Status.Pod != nil && nb.Status.Pod.Phase == corev1.PodRunning
	})

	// t9k config auth with the demo user's password, then t9k through the
	// gateway with the login kept in the T9k config.
	config := filepath.Join(dir, "t9k-config.yaml")
	password, err := clus.DemoPassword()
	if err != nil {
		t.Fatal(err)
	}
	out, err := runT9kCLI(ctx, cluster.DemoUser+"\n"+password+"\n\n", "config", "auth", cluster.GatewayURL, "--insecure-skip-tls-verify", "-c", config)
	if err != nil || !strings.Contains(out, "Login succeeded!") {
		t.Fatalf("t9k config auth: %v\n%s", err, out)
	}
	if out, err := runT9kCLI(ctx, "", "nb", "get", "-p", ns, "-c", config); err != nil || !strings.Contains(out, "remote") {
		t.Fatalf("t9k nb get through the gateway: %v\n%s", err, out)
	}

	// t9k-pf notebook on the Notebook's page, then ssh.
	page := cluster.GatewayURL + "/t9k/notebooks/projects/" + ns + "/name/remote/lab"
	pf := startPortForward(ctx, t, "notebook", page, "-c", config, "--retryMaxTimes=0")
	port := pf.waitPort(ctx, t)
	var sshOut []byte
	err = wait.PollUntilContextTimeout(ctx, 2*time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		sshOut, err = exec.CommandContext(ctx, "ssh", "-p", port, "-i", key, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
			"-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=10", "root@127.0.0.1", "echo from $(cat /proc/sys/kernel/hostname)").CombinedOutput()
		return err == nil, nil
	})
	if err != nil || !strings.Contains(string(sshOut), "from "+running.Status.Pod.Reference.Name) {
		t.Fatalf("ssh through t9k-pf: %v\n%s\nt9k-pf said:\n%s\nsshd said:\n%s", err, sshOut, pf.output(),
			podLogsOf(t, ns, running.Status.Pod.Reference.Name, tensorstackv1beta1.NotebookContainer))
	}

	// Another project's pod: the user may not port-forward there.
	other := startPortForward(ctx, t, "pod", "kube-apiserver", "6443", "-n", "kube-system", "-c", config, "--retryMaxTimes=0")
	if err := other.wait(ctx); err == nil || !strings.Contains(strings.ToLower(err.Error()), "forbidden") {
		t.Errorf("t9k-pf pod in kube-system: %v, want forbidden\n%s", err, other.output())
	}
}

// sshdPodSpec runs sshd on port 22 of cluster.MPIImage with a host key it
// makes at start and the authorized keys the controller mounts, as a
// Notebook image with SSH does.
func sshdPodSpec() corev1.PodSpec {
	script := `mkdir -p /run/sshd && chmod 0755 /run/sshd
ssh-keygen -q -t ed25519 -N '' -f /tmp/host_key
cat /t9k/ssh/authorized_keys.d/* > /tmp/authorized_keys
exec /usr/sbin/sshd -D -e -f /dev/null -h /tmp/host_key -o "AuthorizedKeysFile /tmp/authorized_keys" -o StrictModes=no -o PermitRootLogin=prohibit-password -o PasswordAuthentication=no -p 22`
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](2),
		Containers: []corev1.Container{{
			Name: tensorstackv1beta1.NotebookContainer, Image: cluster.MPIImage, ImagePullPolicy: corev1.PullNever,
			Command: []string{"/bin/sh", "-c", script},
		}},
	}
}

// runT9kCLI runs t9k in-process with input and returns its output and
// error output together.
func runT9kCLI(ctx context.Context, input string, args ...string) (string, error) {
	var out bytes.Buffer
	root := t9kcli.NewRoot(genericiooptions.IOStreams{In: strings.NewReader(input), Out: &out, ErrOut: &out})
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// portForward is a t9k-pf running in-process.
type portForward struct {
	mu   sync.Mutex
	out  bytes.Buffer
	done chan error
}

func (p *portForward) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// output returns what t9k-pf wrote so far.
func (p *portForward) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// startPortForward runs t9k-pf with args until the test ends.
func startPortForward(ctx context.Context, t *testing.T, args ...string) *portForward {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	p := &portForward{done: make(chan error, 1)}
	root := t9kpf.NewRoot(genericiooptions.IOStreams{In: strings.NewReader(""), Out: p, ErrOut: p})
	root.SetArgs(args)
	go func() { p.done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// listening matches t9k-pf's line with the local port.
var listening = regexp.MustCompile(`now you can forward to your target by 127\.0\.0\.1:(\d+)`)

// waitPort returns the local port once t9k-pf listens.
func (p *portForward) waitPort(ctx context.Context, t *testing.T) string {
	t.Helper()
	var port string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		select {
		case err := <-p.done:
			return false, fmt.Errorf("t9k-pf ended: %w", err)
		default:
		}
		if m := listening.FindStringSubmatch(p.output()); m != nil {
			port = m[1]
		}
		return port != "", nil
	})
	if err != nil {
		t.Fatalf("t9k-pf never listened: %v\n%s", err, p.output())
	}
	return port
}

// wait returns t9k-pf's error once it ends.
func (p *portForward) wait(ctx context.Context) error {
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
