package main

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs/pytorch"
	"github.com/accelstack/accelstack/test/harness"
)

// accelstack is cmd/controllers, every controller of it, reconciling
// PyTorchTrainingJobs.
type accelstack struct{}

func (accelstack) name() string { return "accelstack" }

func (accelstack) start(ctx context.Context, cp *harness.ControlPlane, dir string) (*running, error) {
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
	r, err := waitReady(ctx, proc, p, pytorch.Kind{}.Component())
	if err != nil {
		return nil, errors.Join(err, proc.Stop())
	}
	return r, nil
}

func (accelstack) job(namespace, name string) client.Object {
	return &batchv1beta1.PyTorchTrainingJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: batchv1beta1.PyTorchTrainingJobSpec{ReplicaSpecs: []batchv1beta1.PyTorchReplicaSpec{
			{Type: pytorch.MasterType, Replicas: ptr.To[int32](masters), Template: podTemplate()},
			{Type: pytorch.WorkerType, Replicas: ptr.To[int32](workers), Template: podTemplate()},
		}},
	}
}
