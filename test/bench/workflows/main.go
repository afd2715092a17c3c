// Command workflows benchmarks the WorkflowRun controller of
// cmd/controllers on a wide DAG: one node fans out to -nodes minus two
// nodes that fan in to a last one, every node a Pod template.
//
// The controllers run as their own process against a fresh control plane
// (envtest: a real kube-apiserver and etcd with the project's CRDs, no
// kubelet). The bench plays the kubelet: it marks each pod a run creates
// Succeeded as soon as it sees it. It measures the seconds from the run's
// creation to its Succeeded phase, to the last node's start, the
// controllers' CPU time over that span, and the runs and pods created.
//
// It reports and asserts nothing: the markdown it prints is what make bench
// writes into docs/benchmarks.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/harness"
)

func main() {
	nodes := flag.Int("nodes", 200, "Nodes of the DAG, fan-out and fan-in included.")
	timeout := flag.Duration("timeout", 10*time.Minute, "Bound on the run.")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, *nodes, *timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "workflows bench:", err)
		os.Exit(1)
	}
	fmt.Printf("WorkflowRun controller of `controllers` on a DAG of %d Pod nodes (1 -> %d -> 1), the bench playing the kubelet (pods Succeeded as soon as seen), against a real kube-apiserver.\n\n", *nodes, *nodes-2)
	fmt.Println("| measure | value |")
	fmt.Println("|---|---|")
	fmt.Printf("| creation to Succeeded | %.1f s |\n", res.total.Seconds())
	fmt.Printf("| creation to the last node's run | %.1f s |\n", res.lastStarted.Seconds())
	fmt.Printf("| controllers' CPU over that span | %.1f s |\n", res.cpu.Seconds())
	fmt.Printf("| node runs created | %d |\n", res.runs)
	fmt.Printf("| pods created | %d |\n", res.pods)
}

// result is what one run measured.
type result struct {
	total, lastStarted, cpu time.Duration
	runs, pods              int
}

func run(ctx context.Context, n int, timeout time.Duration) (res result, err error) {
	cp, err := harness.NewControlPlane()
	if err != nil {
		return res, err
	}
	defer func() { _ = cp.Stop() }()
	dir, err := os.MkdirTemp("", "workflows-bench-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	bin, err := harness.BuildCmd("controllers")
	if err != nil {
		return res, err
	}
	port, err := harness.FreePort()
	if err != nil {
		return res, err
	}
	wh := cp.Env.WebhookInstallOptions
	proc, err := harness.RunProcess("controllers", bin, []string{
		"--metrics-bind-address=0", "--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(port),
		"--webhook-self-signed=false", fmt.Sprintf("--webhook-port=%d", wh.LocalServingPort),
		"--webhook-cert-dir=" + wh.LocalServingCertDir,
	}, filepath.Join(dir, "controllers.log"), "KUBECONFIG="+cp.KubeconfigPath)
	if err != nil {
		return res, err
	}
	defer func() { _ = proc.Stop() }()
	readyz := "http://127.0.0.1:" + strconv.Itoa(port) + "/readyz"
	if err := proc.WaitReady(2*time.Minute, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, readyz, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", readyz, resp.Status)
		}
		return nil
	}); err != nil {
		return res, err
	}
	time.Sleep(2 * time.Second) // let the informers list

	c := cp.Client
	const ns = "bench"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return res, err
	}
	kube, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return res, err
	}
	pods := playKubelet(ctx, kube, ns)

	tmpl := &batchv1beta1.WorkflowTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "step"},
		Spec: batchv1beta1.WorkflowTemplateSpec{Type: batchv1beta1.WorkflowTemplateTypePod, Pod: &batchv1beta1.PodWorkflowTemplate{
			PodSpec: corev1.PodSpec{Containers: []corev1.Container{{Name: "step", Image: "busybox", Command: []string{"true"}}}},
		}},
	}
	dag := &batchv1beta1.DAGWorkflowTemplate{Templates: []batchv1beta1.DAGNode{{Name: "start", WorkflowTemplateRef: "step"}}}
	var middle []string
	for i := range n - 2 {
		name := fmt.Sprintf("n%d", i)
		middle = append(middle, name)
		dag.Templates = append(dag.Templates, batchv1beta1.DAGNode{Name: name, WorkflowTemplateRef: "step", Dependencies: []string{"start"}})
	}
	dag.Templates = append(dag.Templates, batchv1beta1.DAGNode{Name: "end", WorkflowTemplateRef: "step", Dependencies: middle})
	wr := &batchv1beta1.WorkflowRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wide"},
		Spec: batchv1beta1.WorkflowRunSpec{WorkflowTemplateSpec: &batchv1beta1.WorkflowTemplateSpec{
			Type: batchv1beta1.WorkflowTemplateTypeDAG, DAG: dag,
		}},
	}
	if err := c.Create(ctx, tmpl); err != nil {
		return res, err
	}
	cpu0, err := harness.ProcessCPU(proc.Pid())
	if err != nil {
		return res, err
	}
	start := time.Now()
	if err := c.Create(ctx, wr); err != nil {
		return res, err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = wait.PollUntilContextCancel(wctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		cur := &batchv1beta1.WorkflowRun{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(wr), cur); err != nil {
			return false, err
		}
		if res.lastStarted == 0 && cur.Status.Nodes["end"].WorkflowRunName != "" {
			res.lastStarted = time.Since(start)
		}
		if cur.Status.Phase.Done() && cur.Status.Phase != batchv1beta1.NodeSucceeded {
			return false, fmt.Errorf("run %s: %s", cur.Status.Phase, cur.Status.Message)
		}
		return cur.Status.Phase == batchv1beta1.NodeSucceeded, nil
	})
	if err != nil {
		return res, fmt.Errorf("waiting for the DAG: %w\n%s", err, proc.Log())
	}
	res.total = time.Since(start)
	cpu1, err := harness.ProcessCPU(proc.Pid())
	if err != nil {
		return res, err
	}
	res.cpu = cpu1 - cpu0
	var runs batchv1beta1.WorkflowRunList
	if err := c.List(ctx, &runs, client.InNamespace(ns), client.HasLabels{batchv1beta1.WorkflowRunNodeLabel}); err != nil {
		return res, err
	}
	res.runs, res.pods = len(runs.Items), int(pods.Load())
	return res, nil
}

// podCount counts the pods the kubelet player saw.
type podCount = atomic.Int64

// playKubelet marks every pod of a run in ns Succeeded as soon as it
// appears, as a kubelet whose containers exit at once would.
func playKubelet(ctx context.Context, kube kubernetes.Interface, ns string) *podCount {
	count := &podCount{}
	lw := cache.NewFilteredListWatchFromClient(kube.CoreV1().RESTClient(), "pods", ns, func(o *metav1.ListOptions) {
		o.LabelSelector = batchv1beta1.WorkflowRunLabel
	})
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			pod := obj.(*corev1.Pod).DeepCopy()
			if pod.Status.Phase == corev1.PodSucceeded {
				return
			}
			count.Add(1)
			now := metav1.Now()
			pod.Status.Phase = corev1.PodSucceeded
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "step", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}}}}
			go func() {
				_, _ = kube.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
			}()
		}},
	})
	go ctrl.RunWithContext(ctx)
	return count
}
