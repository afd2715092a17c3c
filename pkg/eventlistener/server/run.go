package server

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// RunListener serves the listener of cfg on addr until ctx ends, then waits
// for the deliveries under way.
func RunListener(ctx context.Context, addr string, cfg ListenerConfig) error {
	sender, err := NewSender(cfg.SendTimeout)
	if err != nil {
		return err
	}
	l, err := NewListener(cfg, sender)
	if err != nil {
		return err
	}
	err = Serve(ctx, addr, l)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	l.Close(wctx)
	return err
}

// RunTrigger serves the trigger of cfg on addr until ctx ends, creating runs
// through the API server of restConfig.
func RunTrigger(ctx context.Context, addr string, cfg serverconfig.TriggerConfig, restConfig *rest.Config, maxEventBytes int64) error {
	c, err := NewRunClient(restConfig)
	if err != nil {
		return err
	}
	t, err := NewTrigger(cfg, c)
	if err != nil {
		return err
	}
	h, err := t.Handler(ctx, maxEventBytes)
	if err != nil {
		return err
	}
	return Serve(ctx, addr, h)
}

// NewRunClient returns a client of restConfig that knows WorkflowRuns and
// whether its API server is ready.
func NewRunClient(restConfig *rest.Config) (RunClient, error) {
	scheme := runtime.NewScheme()
	if err := batchv1beta1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("adding the WorkflowRun types: %w", err)
	}
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating the API client: %w", err)
	}
	d, err := discovery.NewDiscoveryClientForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the API server's readiness client: %w", err)
	}
	return apiClient{Client: c, raw: d.RESTClient()}, nil
}

// apiClient is a RunClient that can also tell whether its API server is
// ready.
type apiClient struct {
	client.Client
	raw rest.Interface
}

// Ready returns nil when the API server answers ok at /readyz, which it
// does only once its authorizer has synced; an error otherwise.
func (c apiClient) Ready(ctx context.Context) error {
	if _, err := c.raw.Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
		return fmt.Errorf("the API server is not ready: %w", err)
	}
	return nil
}
