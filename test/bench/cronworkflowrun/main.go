// Command cronworkflowrun benchmarks the CronWorkflowRun controller: one
// CronWorkflowRun of "* * * * *" for -minutes simulated minutes, on envtest
// (a real kube-apiserver and etcd with the project's CRDs). The controller
// runs as a process of its own (this program again, with -controller) on a
// manager watching the bench's namespace, telling time by a fake clock that
// the bench sets to each minute in turn, once the previous minute's run
// exists and the CronWorkflowRun's lastScheduleTime has moved to it. The
// bench plays the WorkflowRun controller by marking each run Succeeded once
// the next has started, and stops and starts the controller once halfway
// through, between two minutes. A watch of the runs counts how often each
// name is added: a run started twice, or deleted and started again, shows
// as doubled.
//
// It prints a markdown table (runs started, doubled, missed, the
// controller's CPU time, the wall time) that make bench writes into
// docs/benchmarks.md, with its target beside the figures; it does not fail
// on them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/workflow/cron"
	"github.com/accelstack/accelstack/test/harness"
)

const (
	namespace = "bench"
	cronName  = "every-minute"
)

func main() {
	minutes := flag.Int("minutes", 60, "Simulated minutes, one scheduled time each.")
	stepTimeout := flag.Duration("step-timeout", 30*time.Second, "How long the controller may take to act on one minute.")
	controller := flag.Bool("controller", false, "Run as the controller process (the bench starts it).")
	kubeconfig := flag.String("controller-kubeconfig", "", "The controller process's kubeconfig.")
	start := flag.Int64("start", 0, "The Unix time the controller process's clock starts at.")
	flag.Parse()
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *controller {
		if err := runController(ctx, *kubeconfig, time.Unix(*start, 0)); err != nil {
			fmt.Fprintln(os.Stderr, "bench cronworkflowrun controller:", err)
			os.Exit(1)
		}
		return
	}
	res, err := run(ctx, *minutes, *stepTimeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench cronworkflowrun:", err)
		os.Exit(1)
	}
	report(res)
}

// result is what the bench measured.
type result struct {
	minutes int
	// started is the runs of distinct names added; doubled the names added
	// more than once; missed the minutes without a run.
	started, doubled, missed int
	// late is the minutes the controller did not act on within the step
	// timeout.
	late int
	// cpu is the controller processes' CPU time over the minutes, their
	// start and cache sync left out.
	cpu  time.Duration
	wall time.Duration
	// steps are, per minute, from the clock set to the run and
	// lastScheduleTime seen.
	steps []time.Duration
}

func run(ctx context.Context, minutes int, stepTimeout time.Duration) (res result, err error) {
	res.minutes = minutes
	cp, err := harness.NewControlPlane()
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, cp.Stop()) }()
	c, err := client.NewWithWatch(cp.Config, client.Options{Scheme: cp.Scheme})
	if err != nil {
		return res, err
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return res, err
	}
	w, err := watchNamespace(ctx, c)
	if err != nil {
		return res, err
	}
	defer w.stop()

	// The clock starts before the CronWorkflowRun's creation: its first
	// time is the first whole minute after.
	now := time.Now().Truncate(time.Minute)
	proc, err := startController(cp.KubeconfigPath, now)
	if err != nil {
		return res, err
	}
	defer func() {
		if proc != nil {
			err = errors.Join(err, proc.stop())
		}
	}()
	cwr := &batchv1beta1.CronWorkflowRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: cronName},
		Spec: batchv1beta1.CronWorkflowRunSpec{
			Schedule:    "* * * * *",
			WorkflowRun: batchv1beta1.WorkflowRunTemplateSpec{Spec: batchv1beta1.WorkflowRunSpec{WorkflowTemplateRef: "train"}},
		},
	}
	if err := c.Create(ctx, cwr); err != nil {
		return res, err
	}
	first := cwr.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)

	cpu0, err := proc.cpu()
	if err != nil {
		return res, err
	}
	start := time.Now()
	var restart time.Duration
	for i := range minutes {
		at := first.Add(time.Duration(i) * time.Minute)
		if i == minutes/2 {
			// A restart between two minutes: its CPU counts, its time not.
			restartStart := time.Now()
			cpu, err := proc.cpu()
			if err != nil {
				return res, err
			}
			res.cpu += cpu - cpu0
			if err := proc.stop(); err != nil {
				return res, fmt.Errorf("stopping the controller: %w", err)
			}
			proc = nil
			if proc, err = startController(cp.KubeconfigPath, at.Add(-time.Minute)); err != nil {
				return res, err
			}
			if cpu0, err = proc.cpu(); err != nil {
				return res, err
			}
			restart = time.Since(restartStart)
		}
		stepStart := time.Now()
		if err := proc.setTime(at); err != nil {
			return res, err
		}
		if !w.waitFor(ctx, cron.RunName(cronName, at), at, stepTimeout) {
			res.late++
			continue
		}
		res.steps = append(res.steps, time.Since(stepStart))
		if i > 0 {
			// The previous run ends, as its controller would say.
			if err := succeed(ctx, c, cron.RunName(cronName, at.Add(-time.Minute))); err != nil {
				return res, err
			}
		}
	}
	res.wall = time.Since(start) - restart
	cpu1, err := proc.cpu()
	if err != nil {
		return res, err
	}
	res.cpu += cpu1 - cpu0

	// Let a late double show before counting.
	time.Sleep(2 * time.Second)
	added := w.added()
	for i := range minutes {
		if added[cron.RunName(cronName, first.Add(time.Duration(i)*time.Minute))] == 0 {
			res.missed++
		}
	}
	for _, n := range added {
		res.started++
		if n > 1 {
			res.doubled++
		}
	}
	return res, w.error()
}

// succeed marks a run Succeeded through the status subresource.
func succeed(ctx context.Context, c client.Client, name string) error {
	r := &batchv1beta1.WorkflowRun{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, r); err != nil {
		return err
	}
	r.Status.Phase = batchv1beta1.NodeSucceeded
	return c.Status().Update(ctx, r)
}

// report prints the markdown.
func report(r result) {
	fmt.Printf("One CronWorkflowRun of `* * * * *` for %d simulated minutes on envtest (a real kube-apiserver and etcd), %d CPUs. "+
		"The controller runs as a process of its own with a fake clock that the bench sets to each minute once the previous "+
		"minute's run exists and lastScheduleTime has moved to it, and is stopped and started again halfway; the bench marks "+
		"each run Succeeded once the next has started. A watch of the runs counts each name added: a run started twice, "+
		"or deleted and started again, is doubled. CPU is the controller's over the %d minutes (the restart's included, "+
		"the first start's cache sync not); wall time leaves the restart out.\n\n",
		r.minutes, runtime.NumCPU(), r.minutes)
	fmt.Println("| minutes | runs started | doubled | missed | not acted on within the step timeout | controller CPU | wall time | clock set to run seen: p50, max |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	fmt.Printf("| %d | %d | %d | %d | %d | %.2f s | %.1f s | %s, %s |\n", r.minutes, r.started, r.doubled, r.missed, r.late,
		r.cpu.Seconds(), r.wall.Seconds(), ms(harness.Percentile(r.steps, 0.5)), ms(harness.Percentile(r.steps, 1)))
	fmt.Printf("\nTarget: runs started = %d, 0 doubled, 0 missed.\n", r.minutes)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
