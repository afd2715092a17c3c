package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/test/harness"
)

// controller is one controller under test, as the bench drives it.
type controller interface {
	// name is the controller's row in the tables.
	name() string
	// start installs what the controller needs on cp, runs it as a process
	// of its own with its log in dir, and returns once it is ready.
	start(ctx context.Context, cp *harness.ControlPlane, dir string) (*running, error)
	// job returns a job of the workload it was made for, not yet created.
	job(namespace, name string) client.Object
}

// running is a started controller.
type running struct {
	proc *harness.Process
	// metrics is the URL of its /metrics.
	metrics string
	// reconciler is the controller label of its job reconciles in the
	// controller-runtime metrics.
	reconciler string
}

// ports are the local ports a controller listens on.
type ports struct {
	metrics, probes, webhook int
}

// freePorts picks the ports of one controller.
func freePorts() (ports, error) {
	var p ports
	for _, port := range []*int{&p.metrics, &p.probes, &p.webhook} {
		var err error
		if *port, err = harness.FreePort(); err != nil {
			return ports{}, err
		}
	}
	return p, nil
}

// addr is 127.0.0.1:port.
func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// launch starts bin with the admin kubeconfig of cp in $KUBECONFIG, which
// both controllers read as they read an in-cluster config (no client-side
// rate limit unless they set one).
func launch(cp *harness.ControlPlane, name, bin, dir string, args []string, env ...string) (*harness.Process, error) {
	env = append([]string{"KUBECONFIG=" + cp.KubeconfigPath}, env...)
	return harness.RunProcess(name, bin, args, filepath.Join(dir, name+".log"), env...)
}

// waitReady waits until the controller answers /readyz and its job
// controller has registered its metrics, then lets its informers sync.
func waitReady(ctx context.Context, proc *harness.Process, p ports, reconciler string) (*running, error) {
	metrics := "http://" + addr(p.metrics) + "/metrics"
	readyz := "http://" + addr(p.probes) + "/readyz"
	err := proc.WaitReady(2*time.Minute, func(ctx context.Context) error {
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
		mfs, err := scrape(ctx, metrics)
		if err != nil {
			return err
		}
		if workerCount(mfs, reconciler) == 0 {
			return fmt.Errorf("no controller %q in %s yet", reconciler, metrics)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The controller registers its metrics before its informers have
	// listed; on an empty control plane they list at once.
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(2 * time.Second):
	}
	return &running{proc: proc, metrics: metrics, reconciler: reconciler}, nil
}
