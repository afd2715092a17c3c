// Command ascend measures the Ascend device plugin against the fake
// kubelet over real unix sockets and prints a markdown table: Allocate round trips
// (p50, p99) in plain mode on a simulated 910B node, and in Volcano mode
// against a real kube-apiserver with the annotated pod already in the
// informer cache (the Allocate includes the annotation write-back).
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/ascend/plugin"
	"github.com/accelstack/accelstack/pkg/ascend/simulator"
	"github.com/accelstack/accelstack/pkg/ascend/volcano"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/pkg/nodeclient"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/kubelet"
)

const node = "bench-npu-node"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ascend bench:", err)
		os.Exit(1)
	}
}

func run() error {
	plain, err := benchPlain(2000)
	if err != nil {
		return fmt.Errorf("plain mode: %w", err)
	}
	vol, err := benchVolcano(200)
	if err != nil {
		return fmt.Errorf("volcano mode: %w", err)
	}
	fmt.Println("Ascend device plugin on a simulated 910B node, with the fake kubelet over unix sockets; Volcano mode against a real kube-apiserver.")
	fmt.Println()
	fmt.Println("| Ascend device plugin | n | p50 | p99 | target p99 |")
	fmt.Println("|---|---|---|---|---|")
	fmt.Printf("| Allocate, plain mode (2 chips) | %d | %s | %s | < 1 ms |\n", len(plain), pct(plain, 50), pct(plain, 99))
	fmt.Printf("| Allocate, Volcano mode, pod in cache | %d | %s | %s | < 50 ms |\n", len(vol), pct(vol, 50), pct(vol, 99))
	return nil
}

func pct(d []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100].Round(time.Microsecond)
}

// start runs the vendor behind a fake kubelet and returns its plugin.
func start(ctx context.Context, o plugin.Options) (*kubelet.Plugin, func(), error) {
	dir, err := os.MkdirTemp("", "ascb")
	if err != nil {
		return nil, nil, err
	}
	k, err := kubelet.Start(dir)
	if err != nil {
		return nil, nil, err
	}
	v, err := plugin.NewVendor(o)
	if err != nil {
		return nil, nil, err
	}
	sup := deviceplugin.NewSupervisor(deviceplugin.Config{Vendor: "ascend", Backend: o.Backend, PluginDir: dir, FailOnInitError: true}, v)
	rctx, cancel := context.WithCancel(klog.NewContext(ctx, klog.Background()))
	done := make(chan error, 1)
	go func() { done <- sup.Run(rctx) }()
	stop := func() { cancel(); <-done; k.Stop(); os.RemoveAll(dir) }
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	p, err := k.WaitPlugin(wctx, accelerator.Ascend910)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return p, stop, nil
}

func options() plugin.Options {
	o := plugin.DefaultOptions()
	o.Backend, o.Simulate = accelerator.BackendSimulated, simulator.ProfileAscend910B8
	return o
}

func benchPlain(n int) ([]time.Duration, error) {
	ctx := context.Background()
	p, stop, err := start(ctx, options())
	if err != nil {
		return nil, err
	}
	defer stop()
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := p.Allocate(ctx, []string{"Ascend910-0", "Ascend910-3"}); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

func benchVolcano(n int) ([]time.Duration, error) {
	cp, err := harness.NewControlPlane(harness.WithoutCRDs())
	if err != nil {
		return nil, err
	}
	defer cp.Stop()
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	kc, err := nodeclient.New(cp.Config)
	if err != nil {
		return nil, err
	}
	o := options()
	if o.Picker, err = volcano.New(volcano.Options{NodeName: node, Client: kc}); err != nil {
		return nil, err
	}
	p, stop, err := start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer stop()
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		name := "pod-" + strconv.Itoa(i)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{
				accelerator.Ascend910: "Ascend910-" + strconv.Itoa(i%8), volcano.AnnotationPredicateTimeKey: strconv.Itoa(i)}},
			Spec: corev1.PodSpec{NodeName: node, SchedulerName: volcano.DefaultSchedulerName, Containers: []corev1.Container{{
				Name: "c", Image: "x", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
					accelerator.Ascend910: resource.MustParse("1")}}}}},
		}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		// Wait until the informer holds the pod: retry NotFound answers
		// untimed, then time one Allocate with the pod in cache.
		if err := waitCached(ctx, cs, name); err != nil {
			return nil, err
		}
		t0 := time.Now()
		_, err := p.Allocate(ctx, []string{"Ascend910-0"})
		d := time.Since(t0)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
		// Free the chip: a chip given to a live pod is not given again.
		if err := cs.CoreV1().Pods("default").Delete(ctx, name, *metav1.NewDeleteOptions(0)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// waitCached gives the plugin's informer time to see the pod: the
// apiserver has it, and watch delivery follows within milliseconds.
func waitCached(ctx context.Context, cs kubernetes.Interface, name string) error {
	if _, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{}); err != nil {
		return err
	}
	time.Sleep(20 * time.Millisecond)
	return nil
}
