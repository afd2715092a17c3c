package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/accelstack/accelstack/test/harness"
)

const (
	// gpuResource is the extended resource the fake nodes offer.
	gpuResource corev1.ResourceName = "nvidia.com/gpu"
	// kwokAnnotation marks the nodes kwok manages (its
	// --manage-nodes-with-annotation-selector).
	kwokAnnotation = "kwok.x-k8s.io/node"
	kwokSelector   = kwokAnnotation + "=fake"
	// nodeCPU and nodeMemory are each fake node's other capacity.
	nodeCPU    = "64"
	nodeMemory = "512Gi"
	nodePods   = "110"
)

// cluster is the fake cluster every scheduler runs on: a control plane
// with the project's CRDs and the coscheduling PodGroup CRD, and nodes that
// kwok (or, failing it, the bench) keeps Ready.
type cluster struct {
	cp *harness.ControlPlane
	// c and cs are clients without a client-side rate limit.
	c  client.Client
	cs kubernetes.Interface
	// dir holds the logs and configurations of the processes.
	dir  string
	kwok *harness.Process
	// kwokVersion is what kwok --version says; kwokMissing, why kwok does
	// not run (then the bench plays the kubelet itself).
	kwokVersion, kwokMissing string
	// stopKubelet ends the bench's own kubelet when there is no kwok.
	stopKubelet context.CancelFunc
}

// startCluster starts the control plane, installs crds, runs kwok (unless
// noKwok) and creates the nodes.
func startCluster(ctx context.Context, o options, crds []string) (cl *cluster, err error) {
	dir, err := os.MkdirTemp("", "bench-scheduler-")
	if err != nil {
		return nil, err
	}
	cp, err := harness.NewControlPlane()
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	cl = &cluster{cp: cp, dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(err, cl.stop())
			cl = nil
		}
	}()
	if len(crds) > 0 {
		if _, err := envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{Paths: crds, ErrorIfPathMissing: true}); err != nil {
			return cl, fmt.Errorf("installing %v: %w", crds, err)
		}
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1
	if cl.c, err = client.New(cfg, client.Options{Scheme: cp.Scheme}); err != nil {
		return cl, err
	}
	if cl.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return cl, err
	}
	if o.kwok {
		if err := cl.startKwok(); err != nil {
			cl.kwokMissing = err.Error()
			fmt.Fprintln(os.Stderr, "bench scheduler: no kwok, the bench writes the nodes' status itself:", err)
		}
	} else {
		cl.kwokMissing = "-kwok=false"
	}
	if cl.kwok == nil {
		kctx, cancel := context.WithCancel(ctx)
		cl.stopKubelet = cancel
		go cl.playKubelet(kctx)
	}
	start := time.Now()
	if err := cl.createNodes(ctx, o); err != nil {
		return cl, err
	}
	fmt.Fprintf(os.Stderr, "bench scheduler: %d nodes Ready after %.1f s\n", o.nodes, time.Since(start).Seconds())
	return cl, nil
}

func (cl *cluster) stop() error {
	var errs []error
	if cl.stopKubelet != nil {
		cl.stopKubelet()
	}
	if cl.kwok != nil {
		errs = append(errs, cl.kwok.Stop())
	}
	errs = append(errs, cl.cp.Stop(), os.RemoveAll(cl.dir))
	return errors.Join(errs...)
}

// startKwok runs kwok on the nodes with the kwok annotation, with its
// default stages: nodes Ready with a heartbeat Lease, bound pods Running,
// deleted pods gone.
func (cl *cluster) startKwok() error {
	bin, err := harness.Tool("kwok")
	if err != nil {
		return fmt.Errorf("%w (make bench-tools builds it)", err)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w", bin, err)
	}
	cl.kwokVersion = strings.TrimSpace(string(out))
	// An empty configuration: kwok's defaults, whatever ~/.kwok holds.
	config := filepath.Join(cl.dir, "kwok.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: config.kwok.x-k8s.io/v1alpha1\nkind: KwokConfiguration\n"), 0o600); err != nil {
		return err
	}
	port, err := harness.FreePort()
	if err != nil {
		return err
	}
	p, err := harness.RunProcess("kwok", bin, []string{
		"--config=" + config,
		"--kubeconfig=" + cl.cp.KubeconfigPath,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokSelector,
		"--server-address=127.0.0.1:" + strconv.Itoa(port),
	}, filepath.Join(cl.dir, "kwok.log"))
	if err != nil {
		return err
	}
	// kwok has no readiness of its own to wait for: the nodes turning Ready
	// show it works. A kwok that exits at once cannot run here.
	time.Sleep(2 * time.Second)
	if p.Exited() {
		return fmt.Errorf("kwok exited at once:\n%s", p.Log())
	}
	cl.kwok = p
	return nil
}

// createNodes creates o.nodes nodes of o.gpusPerNode GPUs, with the kwok
// annotation, their capacity in their status and without the not-ready
// taint the API server puts on a new node, and waits until all are Ready.
func (cl *cluster) createNodes(ctx context.Context, o options) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(nodeCPU),
		corev1.ResourceMemory: resource.MustParse(nodeMemory),
		corev1.ResourcePods:   resource.MustParse(nodePods),
		gpuResource:           *resource.NewQuantity(int64(o.gpusPerNode), resource.DecimalSI),
	}
	status := map[string]any{"capacity": capacity, "allocatable": capacity}
	if cl.kwok == nil {
		now := metav1.Now()
		status["conditions"] = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "BenchReady",
			LastHeartbeatTime: now, LastTransitionTime: now,
		}}
	}
	statusPatch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	untaint := []byte(`{"spec":{"taints":null}}`)
	err = parallel(ctx, o.nodes, 16, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("fake-%04d", i)
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{corev1.LabelHostname: name, "type": "kwok"},
			Annotations: map[string]string{kwokAnnotation: "fake"},
		}}
		if err := cl.c.Create(ctx, n); err != nil {
			return err
		}
		if err := cl.c.Status().Patch(ctx, n, client.RawPatch(types.MergePatchType, statusPatch)); err != nil {
			return err
		}
		return cl.c.Patch(ctx, n, client.RawPatch(types.MergePatchType, untaint))
	})
	if err != nil {
		return fmt.Errorf("creating nodes: %w", err)
	}
	var ready int
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		var nodes corev1.NodeList
		if err := cl.c.List(ctx, &nodes); err != nil {
			return false, err
		}
		ready = 0
		for _, n := range nodes.Items {
			if nodeReady(&n) && n.Status.Allocatable.Name(gpuResource, resource.DecimalSI).Value() == int64(o.gpusPerNode) && len(n.Spec.Taints) == 0 {
				ready++
			}
		}
		return ready == o.nodes, nil
	})
	if err != nil {
		log := ""
		if cl.kwok != nil {
			log = "\n" + cl.kwok.Log()
		}
		return fmt.Errorf("%d of %d nodes Ready with %d GPUs: %w%s", ready, o.nodes, o.gpusPerNode, err, log)
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// playKubelet finishes the deletion of pods, as kwok's pod-delete stage
// does, when kwok does not run.
func (cl *cluster) playKubelet(ctx context.Context) {
	for ctx.Err() == nil {
		var pods corev1.PodList
		if err := cl.c.List(ctx, &pods); err == nil {
			for i := range pods.Items {
				if p := &pods.Items[i]; p.DeletionTimestamp != nil {
					_ = cl.c.Delete(ctx, p, client.GracePeriodSeconds(0))
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// deletePods deletes every pod of namespace at once and waits until they
// are gone.
func (cl *cluster) deletePods(ctx context.Context, namespace string) error {
	// Deleting thousands of pods at once may outlast the request timeout
	// (the API server goes on deleting, or drops the stream): the call is
	// repeated until none is left.
	del := func(ctx context.Context) error {
		return cl.c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(namespace), client.GracePeriodSeconds(0))
	}
	err := del(ctx)
	polls := 0
	waitErr := wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		var pods metav1.PartialObjectMetadataList
		pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
		if err := cl.c.List(ctx, &pods, client.InNamespace(namespace), client.Limit(1)); err != nil {
			return false, err
		}
		if len(pods.Items) == 0 {
			return true, nil
		}
		if polls++; err != nil && polls%5 == 0 {
			err = del(ctx)
		}
		return false, nil
	})
	if waitErr != nil {
		return errors.Join(waitErr, err)
	}
	return nil
}

// createNamespace creates a namespace of its own for one measurement.
func (cl *cluster) createNamespace(ctx context.Context, name string) error {
	return cl.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// parallel runs f(0..n-1) on workers goroutines and returns the first
// error, after which the rest are not started.
func parallel(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil {
		return ctx.Err()
	}
	return first
}
