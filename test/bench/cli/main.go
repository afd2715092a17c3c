// Command cli benchmarks the t9k command line beside kubectl on the same
// API server (envtest: a real kube-apiserver and etcd with the project's
// CRDs), both run as the binaries a user runs, one after the other in
// turns: listing -jobs GenericJobs across 10 projects (t9k gj get -A and
// kubectl get gj -A), describing one job with its pods and events (t9k gj
// describe and kubectl describe gj), and starting (t9k version and kubectl
// version --client). Both use the same kubeconfig and a fresh discovery
// cache directory per run, so each run pays what a first command in a
// new shell pays. t9k also runs as a user who logged in with t9k config
// auth runs it: through the gateway (in-process, HTTPS), with a login
// token, which the gateway turns into impersonation.
//
// It prints a markdown table (median and p90 wall time per command, the
// ratio of kubectl's median to t9k's: 1.0 or more means t9k is as fast or
// faster) that make bench writes into docs/benchmarks.md, with the targets
// beside it; it does not fail on them.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/gateway/gatewayapi"
	"github.com/accelstack/accelstack/pkg/t9kconfig"
	"github.com/accelstack/accelstack/test/harness"
)

// projects is how many namespaces the jobs spread over.
const projects = 10

func main() {
	jobs := flag.Int("jobs", 1000, "GenericJobs to create, spread over 10 projects.")
	runs := flag.Int("runs", 15, "Runs of each command, in turns.")
	flag.Parse()
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	if err := run(context.Background(), *jobs, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench cli:", err)
		os.Exit(1)
	}
}

// command is one thing a user runs, by both tools.
type command struct {
	what       string
	t9k, kubec []string
}

func run(ctx context.Context, jobs, runs int) error {
	cp, err := harness.NewControlPlane()
	if err != nil {
		return err
	}
	defer func() { _ = cp.Stop() }()
	t9k, err := harness.BuildCmd("t9k")
	if err != nil {
		return err
	}
	kubectl := filepath.Join(cp.Env.BinaryAssetsDirectory, "kubectl")
	if err := populate(ctx, cp.Client, jobs); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-cli-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	t9kConfig, stop, err := loggedIn(ctx, cp, dir)
	if err != nil {
		return err
	}
	defer stop()
	commands := []command{
		{what: fmt.Sprintf("list %d jobs of %d projects", jobs, projects),
			t9k: []string{"gj", "get", "-A"}, kubec: []string{"get", "genericjobs.batch.tensorstack.dev", "-A"}},
		{what: "describe a job with 2 pods and 10 events",
			t9k: []string{"gj", "describe", "job-0", "-p", "project-0"}, kubec: []string{"describe", "genericjobs.batch.tensorstack.dev", "job-0", "-n", "project-0"}},
		{what: "start (print the version)",
			t9k: []string{"version"}, kubec: []string{"version", "--client"}},
	}
	fmt.Printf("t9k beside kubectl %s on envtest, %d runs of each command, the tools taking turns; wall time of the process, with a fresh discovery cache each run. "+
		"t9k runs with the kubeconfig, as kubectl, and through the gateway with a password login's token (t9k config auth).\n\n", harness.KubectlVersion(kubectl), runs)
	fmt.Println("| command | t9k median | t9k p90 | kubectl median | kubectl p90 | kubectl ÷ t9k (median) | target | t9k through the gateway, median | p90 |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	direct := []string{"--kubeconfig", cp.KubeconfigPath}
	for _, c := range commands {
		var tt, kt, gt []time.Duration
		for range runs {
			d, err := timed(t9k, c.t9k, direct)
			if err != nil {
				return err
			}
			tt = append(tt, d)
			if d, err = timed(kubectl, c.kubec, direct); err != nil {
				return err
			}
			kt = append(kt, d)
			if d, err = timed(t9k, c.t9k, []string{"-c", t9kConfig}); err != nil {
				return err
			}
			gt = append(gt, d)
		}
		tm, km := harness.Percentile(tt, 0.5), harness.Percentile(kt, 0.5)
		ratio := float64(km) / float64(tm)
		target := "≥ 1.0: met"
		if ratio < 1.0 {
			target = "≥ 1.0: not met"
		}
		if c.t9k[0] == "version" {
			target = "t9k under 100ms: " + map[bool]string{true: "met", false: "not met"}[tm < 100*time.Millisecond]
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %.2f | %s | %s | %s |\n", c.what, ms(tm), ms(harness.Percentile(tt, 0.9)),
			ms(km), ms(harness.Percentile(kt, 0.9)), ratio, target, ms(harness.Percentile(gt, 0.5)), ms(harness.Percentile(gt, 0.9)))
	}
	return nil
}

// populate creates jobs GenericJobs over the projects, and two pods and
// ten events of job-0 in project-0.
func populate(ctx context.Context, c client.Client, jobs int) error {
	for i := range projects {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("project-%d", i)}}); err != nil {
			return err
		}
	}
	var first *batchv1beta1.GenericJob
	for i := range jobs {
		job := &batchv1beta1.GenericJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("project-%d", i%projects), Name: fmt.Sprintf("job-%d", i/projects)},
			Spec: batchv1beta1.GenericJobSpec{ReplicaSpecs: []batchv1beta1.ReplicaSpec{{Type: "worker", Replicas: ptr.To[int32](2),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}}}},
		}
		if err := c.Create(ctx, job); err != nil {
			return fmt.Errorf("creating job %d: %w", i, err)
		}
		if i == 0 {
			first = job
		}
	}
	for r := range 2 {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: first.Namespace, Name: fmt.Sprintf("job-0-worker-%d", r),
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(first, batchv1beta1.GroupVersion.WithKind("GenericJob"))}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		}
		if err := c.Create(ctx, pod); err != nil {
			return err
		}
		for e := range 5 {
			ev := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Namespace: first.Namespace, Name: fmt.Sprintf("%s.%d", pod.Name, e)},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
				Type:           corev1.EventTypeNormal, Reason: "Scheduled", Message: "placed", LastTimestamp: metav1.Now(),
			}
			if err := c.Create(ctx, ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// loggedIn starts a gateway in front of cp, logs the user bench (a
// cluster admin) in with a password, and writes the T9k config that t9k
// config auth would: its path, and a function that stops the gateway.
func loggedIn(ctx context.Context, cp *harness.ControlPlane, dir string) (string, func(), error) {
	if err := cp.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bench"}},
	}); err != nil {
		return "", nil, err
	}
	gw, err := harness.StartGateway(ctx, cp.Config, dir, map[string]string{"bench": "bench-pw"})
	if err != nil {
		return "", nil, err
	}
	body, _ := json.Marshal(gatewayapi.PasswordLogin{Username: "bench", Password: "bench-pw"})
	resp, err := gw.Client().Post(gw.URL+gatewayapi.LoginPath, "application/json", bytes.NewReader(body))
	if err != nil {
		gw.Close()
		return "", nil, err
	}
	defer resp.Body.Close() //nolint:errcheck // read whole
	var ans gatewayapi.TokenAnswer
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || ans.Token == "" {
		gw.Close()
		return "", nil, fmt.Errorf("logging in at the gateway: %s: %w", resp.Status, err)
	}
	ca, err := os.ReadFile(gw.CAFile)
	if err != nil {
		gw.Close()
		return "", nil, err
	}
	cfg := &t9kconfig.Config{}
	cfg.Set(t9kconfig.Context{Name: "bench", Server: gw.URL, Auth: t9kconfig.Auth{Token: ans.Token}, CertificateAuthorityData: ca})
	path := filepath.Join(dir, "t9k-config.yaml")
	if err := cfg.Save(path); err != nil {
		gw.Close()
		return "", nil, err
	}
	return path, gw.Close, nil
}

// timed runs bin with args, the connection flags conn and a fresh cache
// directory, and returns its wall time.
func timed(bin string, args, conn []string) (time.Duration, error) {
	cache, err := os.MkdirTemp("", "bench-cli-cache-")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(cache) }()
	cmd := exec.Command(bin, append(append(args, conn...), "--cache-dir", cache)...)
	if args[0] == "version" {
		cmd = exec.Command(bin, args...)
	}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%s %v: %w\n%s", filepath.Base(bin), args, err, out)
	}
	return time.Since(start), nil
}

// ms is d in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }
