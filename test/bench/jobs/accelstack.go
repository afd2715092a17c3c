package main

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/test/harness"
)

// accelstack is cmd/controllers, every controller of it, reconciling the
// jobs of one workload.
type accelstack struct {
	w workload
}

func (accelstack) name() string { return "accelstack" }

func (a accelstack) start(ctx context.Context, cp *harness.ControlPlane, dir string) (*running, error) {
	bin, err := harness.BuildCmd("controllers")
	if err != nil {
		return nil, err
	}
	p, err := freePorts()
	if err != nil {
		return nil, err
	}
	// The webhook server serves CRD conversion where the control plane
	// points it, with the control plane's certificate, as in make run.
	wh := cp.Env.WebhookInstallOptions
	proc, err := launch(cp, "controllers", bin, dir, []string{
		"--metrics-bind-address=" + addr(p.metrics),
		"--health-probe-bind-address=" + addr(p.probes),
		"--webhook-self-signed=false",
		fmt.Sprintf("--webhook-port=%d", wh.LocalServingPort),
		"--webhook-cert-dir=" + wh.LocalServingCertDir,
	})
	if err != nil {
		return nil, err
	}
	r, err := waitReady(ctx, proc, p, a.w.reconciler)
	if err != nil {
		return nil, errors.Join(err, proc.Stop())
	}
	return r, nil
}

func (a accelstack) job(namespace, name string) client.Object { return a.w.ours(namespace, name) }
