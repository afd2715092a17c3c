// Package workflow is the WorkflowRun controller: it resolves a run's
// WorkflowTemplate, substitutes its variables, and runs it as a pod, a pod of
// sequential steps, an object, a T9k Job or a DAG of child runs; and the
// admission webhook of WorkflowTemplates, WorkflowRuns and CronWorkflowRuns.
package workflow

import (
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/cacheselector"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// DefaultToolsImage is the image whose workflow-tools binary sequences the
// steps of SeqPod runs.
const DefaultToolsImage = "ghcr.io/accelstack/workflow-tools:latest"

// Options configures the controller.
type Options struct {
	// ToolsImage holds the step sequencer; empty means DefaultToolsImage.
	ToolsImage string
	// JobKinds validate the T9k Job templates.
	JobKinds []jobs.Kind
	// TriggerRules validate the event sources and filters of
	// WorkflowTriggers, whose runs the workflow webhook checks.
	TriggerRules func(*triggersv1beta1.WorkflowTrigger) field.ErrorList
	// PollInterval is how often the objects of Resource runs whose kind is
	// not watched are looked at; 0 means 5 seconds.
	PollInterval time.Duration
	// Workers is the number of runs reconciled at once; 0 means 4.
	Workers int
	// Clock tells the time; nil means the real clock.
	Clock clock.PassiveClock
}

// Setup runs the WorkflowRun controller and the workflow webhooks on mgr.
// The pods and T9k Jobs runs create are watched in a cache of their own,
// holding only objects labelled with a run.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.ToolsImage == "" {
		opts.ToolsImage = DefaultToolsImage
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 5 * time.Second
	}
	if opts.Workers == 0 {
		opts.Workers = 4
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	c, err := cacheselector.NewCache(mgr, "workflow", batchv1beta1.WorkflowRunLabel, cache.Options{})
	if err != nil {
		return err
	}
	r := &Reconciler{
		client:   mgr.GetClient(),
		api:      mgr.GetAPIReader(),
		lookup:   ReaderLookup(mgr.GetClient(), mgr.GetAPIReader()),
		cache:    c,
		scheme:   mgr.GetScheme(),
		recorder: mgr.GetEventRecorder("workflowrun-controller"),
		clock:    opts.Clock,
		as:       impersonator(mgr.GetConfig(), mgr.GetScheme(), mgr.GetRESTMapper()),
		opts:     opts,
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("workflowrun").
		For(&batchv1beta1.WorkflowRun{}).
		Owns(&batchv1beta1.WorkflowRun{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers})
	for _, o := range append([]client.Object{&corev1.Pod{}}, jobKinds()...) {
		b = b.WatchesRawSource(source.Kind(c, o,
			handler.TypedEnqueueRequestForOwner[client.Object](mgr.GetScheme(), mgr.GetRESTMapper(), &batchv1beta1.WorkflowRun{}, handler.OnlyControllerOwner())))
	}
	if err := b.Complete(r); err != nil {
		return err
	}
	v := NewValidator(r.lookup, opts.JobKinds)
	v.TriggerRules = opts.TriggerRules
	decoder := admission.NewDecoder(mgr.GetScheme())
	gk := func(kind string) schema.GroupKind {
		return schema.GroupKind{Group: batchv1beta1.GroupVersion.Group, Kind: kind}
	}
	srv := mgr.GetWebhookServer()
	srv.Register(TemplateWebhookPath, &admission.Webhook{Handler: &webhook{v: v, decoder: decoder, check: checkTemplate, gk: gk("WorkflowTemplate")}})
	srv.Register(RunWebhookPath, &admission.Webhook{Handler: &webhook{v: v, decoder: decoder, check: checkRun, gk: gk("WorkflowRun")}})
	srv.Register(CronWebhookPath, &admission.Webhook{Handler: &webhook{v: v, decoder: decoder, check: checkCron, gk: gk("CronWorkflowRun")}})
	srv.Register(TriggerWebhookPath, &admission.Webhook{Handler: &webhook{v: v, decoder: decoder, check: checkTrigger,
		gk: schema.GroupKind{Group: triggersv1beta1.GroupVersion.Group, Kind: "WorkflowTrigger"}}})
	return nil
}

// maxImpersonators bounds the clients kept per service account.
const maxImpersonators = 256

// impersonator returns a function that gives a client acting as a service
// account: the objects of Resource runs are created with the permissions
// of the run's service account, never the controller's.
func impersonator(cfg *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper) func(ns, sa string) (client.Client, error) {
	var mu sync.Mutex
	clients := map[string]client.Client{}
	return func(ns, sa string) (client.Client, error) {
		user := "system:serviceaccount:" + ns + ":" + sa
		mu.Lock()
		defer mu.Unlock()
		if c, ok := clients[user]; ok {
			return c, nil
		}
		if len(clients) >= maxImpersonators {
			clear(clients)
		}
		ic := rest.CopyConfig(cfg)
		ic.Impersonate = rest.ImpersonationConfig{UserName: user}
		c, err := client.New(ic, client.Options{Scheme: scheme, Mapper: mapper})
		if err != nil {
			return nil, fmt.Errorf("creating a client acting as %s: %w", user, err)
		}
		clients[user] = c
		return c, nil
	}
}
