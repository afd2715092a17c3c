// Command console benchmarks the Build Console's Job list in a real browser
// beside kubectl on the same API server (envtest: a real kube-apiserver and
// etcd with the project's CRDs) holding -jobs PyTorchTrainingJobs in one
// project.
//
// The console runs as a user reaches it: headless Chromium logs in at the
// gateway (in-process, HTTPS, with Ory Hydra as its provider, as the
// integration tests run it), and opens the Job list, which lists the eight
// T9k Job kinds through the gateway's Kubernetes API as the user (LIST
// with resourceVersion=0: the API server's watch cache). A load is timed in
// the page, from the navigation's start to the first task after the frame
// that shows the first page of rows with the count of all jobs: the list
// rendered and the page free to answer a click. kubectl get pj -A runs as
// a user runs it, with a warm discovery cache, until it has printed every
// job. The two take turns.
//
// It prints a markdown table (median and p90, the ratio of the console's
// median to kubectl's, and the target: within 2x) that make bench writes
// into docs/benchmarks.md; it does not fail on the target.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/console"
	"github.com/accelstack/accelstack/pkg/directory"
	"github.com/accelstack/accelstack/pkg/gateway"
	"github.com/accelstack/accelstack/pkg/members"
	"github.com/accelstack/accelstack/test/browser"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// project is the namespace of the jobs, and the user's project.
const project = "bench"

func main() {
	jobs := flag.Int("jobs", 1000, "PyTorchTrainingJobs to create in the project.")
	runs := flag.Int("runs", 10, "Loads of the list and runs of kubectl, in turns.")
	flag.Parse()
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	p := &testutil.Program{}
	defer p.Close()
	if err := run(context.Background(), p, *jobs, *runs); err != nil {
		p.Fatalf("bench console: %v", err)
	}
}

func run(ctx context.Context, p *testutil.Program, jobs, runs int) error {
	cp, err := harness.NewControlPlane()
	if err != nil {
		return err
	}
	p.Cleanup(func() { _ = cp.Stop() })
	if err := populate(ctx, cp.Client, jobs); err != nil {
		return err
	}
	base, err := startGateway(ctx, p, cp)
	if err != nil {
		return err
	}
	kubectl := filepath.Join(cp.Env.BinaryAssetsDirectory, "kubectl")
	get := []string{"--kubeconfig", cp.KubeconfigPath, "--cache-dir", p.TempDir(), "get", "pytorchtrainingjobs.batch.tensorstack.dev", "-A"}
	if _, err := timed(kubectl, get, jobs); err != nil { // fills the discovery cache
		return err
	}

	b := browser.New(p)
	list := base + console.BuildPrefix + "projects/" + project + "/jobs"
	browser.Login(b, p, list, "bench", "bench-pw", "section.list")
	if _, err := chromedp.Call(b, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: readyScript(jobs)}); err != nil {
		return err
	}
	load := func() (time.Duration, error) {
		ctx, cancel := context.WithTimeout(b, 2*time.Minute)
		defer cancel()
		err := chromedp.Do(ctx, chromedp.Navigate(list))
		var ms float64
		if err == nil {
			ms, err = chromedp.Run(ctx, chromedp.Poll[float64]("window.__listReady", chromedp.WithPollingInterval(10*time.Millisecond)))
		}
		if err != nil {
			return 0, fmt.Errorf("loading the Job list: %w (at %s)", err, browser.Page(b))
		}
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	if _, err := load(); err != nil { // the browser's cache holds the assets, as for a returning user
		return err
	}
	var ct, kt []time.Duration
	for range runs {
		d, err := load()
		if err != nil {
			return err
		}
		ct = append(ct, d)
		if d, err = timed(kubectl, get, jobs); err != nil {
			return err
		}
		kt = append(kt, d)
	}
	cm, km := harness.Percentile(ct, 0.5), harness.Percentile(kt, 0.5)
	ratio := float64(cm) / float64(km)
	fmt.Printf("The Build Console's Job list in headless Chromium (%s) through the gateway beside kubectl get pj -A (%s) on envtest, %d PyTorchTrainingJobs in one project, %d runs each in turns. "+
		"The console: from the navigation's start until the first page of rows and the count of all jobs are shown and the page is free (its assets from the browser's cache, as for a returning user); kubectl: the process's wall time with a warm discovery cache.\n\n",
		browserVersion(b), "kubectl "+harness.KubectlVersion(kubectl), jobs, runs)
	fmt.Println("| list | console median | console p90 | kubectl median | kubectl p90 | console ÷ kubectl (median) | target |")
	fmt.Println("|---|---|---|---|---|---|---|")
	met := map[bool]string{true: "met", false: "not met"}[ratio <= 2]
	fmt.Printf("| %d jobs | %s | %s | %s | %s | %.2f | ≤ 2: %s |\n", jobs, ms(cm), ms(harness.Percentile(ct, 0.9)), ms(km), ms(harness.Percentile(kt, 0.9)), ratio, met)
	return nil
}

// readyScript is run in every page before its own scripts: once the Job
// list shows its first page of rows and the count of all jobs, it notes
// the time after the next frame, in window.__listReady.
func readyScript(jobs int) string {
	return `(() => {
  const done = () => document.querySelectorAll('section.list tbody tr').length > 0 &&
    (document.querySelector('section.list .pager span') || {}).textContent?.includes('(` + fmt.Sprint(jobs) + `)');
  const observer = new MutationObserver(() => {
    if (!done()) return;
    observer.disconnect();
    requestAnimationFrame(() => setTimeout(() => { window.__listReady = performance.now(); }));
  });
  observer.observe(document, { childList: true, subtree: true, characterData: true });
})()`
}

// populate creates jobs PyTorchTrainingJobs in the project, the project
// with the user bench as a member, and a cluster-admin binding for bench,
// so that kubectl and the console see the same.
func populate(ctx context.Context, c client.Client, jobs int) error {
	for _, ns := range []string{project, gateway.DefaultOptions().Namespace} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	proj := &unstructured.Unstructured{}
	proj.SetAPIVersion("tensorstack.dev/v1beta1")
	proj.SetKind("Project")
	proj.SetName(project)
	if err := c.Create(ctx, proj); err != nil {
		return err
	}
	if err := members.Set(ctx, c, project, members.Member{Kind: "User", Name: "bench", Scopes: []members.Scope{members.Build}}); err != nil {
		return err
	}
	if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bench"}},
	}); err != nil {
		return err
	}
	for i := range jobs {
		replica := func(t string, n int32) batchv1beta1.PyTorchReplicaSpec {
			return batchv1beta1.PyTorchReplicaSpec{Type: t, Replicas: ptr.To(n), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "pytorch", Image: "torch:1", Command: []string{"torchrun", "train.py"}}}}}}
		}
		job := &batchv1beta1.PyTorchTrainingJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: project, Name: fmt.Sprintf("job-%d", i)},
			Spec:       batchv1beta1.PyTorchTrainingJobSpec{ReplicaSpecs: []batchv1beta1.PyTorchReplicaSpec{replica("master", 1), replica("worker", 3)}},
		}
		if err := c.Create(ctx, job); err != nil {
			return fmt.Errorf("creating job %d: %w", i, err)
		}
	}
	return nil
}

// startGateway starts Hydra, the console and a gateway in front of cp
// whose login form knows bench, and returns the gateway's URL.
func startGateway(ctx context.Context, p *testutil.Program, cp *harness.ControlPlane) (string, error) {
	gw := httptest.NewUnstartedServer(nil)
	base := "https://" + gw.Listener.Addr().String()
	idp := harness.StartGatewayHydra(p, base)
	h, err := console.NewHandler(console.DefaultConfig())
	if err != nil {
		return "", err
	}
	consoleServer := httptest.NewServer(h)
	p.Cleanup(consoleServer.Close)
	hash, err := directory.HashPassword("bench-pw")
	if err != nil {
		return "", err
	}
	users := filepath.Join(p.TempDir(), "users.yaml")
	if err := os.WriteFile(users, []byte("users:\n  - name: bench\n    passwordHash: \""+hash+"\"\n"), 0o600); err != nil {
		return "", err
	}
	opts := gateway.DefaultOptions()
	opts.Host = gw.Listener.Addr().String()
	opts.Login.Issuer, opts.Login.BackChannel, opts.Login.AdminURL = idp.Issuer, idp.PublicURL, idp.AdminURL
	opts.Login.UsersFile = users
	opts.ConsoleURL = consoleServer.URL
	g, err := gateway.New(ctx, cp.Config, opts, logr.Discard(), prometheus.NewRegistry())
	if err != nil {
		return "", err
	}
	if err := g.Login.EnsureClient(ctx); err != nil {
		return "", err
	}
	gw.Config.Handler = g.Handler()
	gw.StartTLS()
	p.Cleanup(gw.Close)
	return base, nil
}

// timed runs bin with args and returns its wall time, checking that it
// printed a header and want rows.
func timed(bin string, args []string, want int) (time.Duration, error) {
	start := time.Now()
	out, err := exec.Command(bin, args...).Output()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", filepath.Base(bin), strings.Join(args, " "), err)
	}
	if n := strings.Count(string(out), "\n"); n != want+1 {
		return 0, fmt.Errorf("%s printed %d lines, want %d", filepath.Base(bin), n, want+1)
	}
	return d, nil
}

// ms is d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

// browserVersion is Chromium's product version, e.g. 156.0.8078.129.
func browserVersion(ctx context.Context) string {
	v, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, cdpbrowser.GetVersion, cdp.Empty{})
	if err != nil {
		return "Chromium"
	}
	return "Chromium " + v.Product[strings.LastIndex(v.Product, "/")+1:]
}
