package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener/filter"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// DefaultMaxEventBytes bounds an event a trigger takes: a listener's
// largest body with its headers.
const DefaultMaxEventBytes = 4 << 20

// RunClient creates runs and lists those of a trigger; a controller-runtime
// client is one.
type RunClient interface {
	Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error
	List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error
}

// Trigger starts WorkflowRuns on the events of its listeners.
type Trigger struct {
	cfg     serverconfig.TriggerConfig
	runs    RunClient
	limiter *rate.Limiter
}

// NewTrigger returns the trigger of cfg creating and counting runs with c.
func NewTrigger(cfg serverconfig.TriggerConfig, c RunClient) (*Trigger, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxLiveRuns <= 0 {
		cfg.MaxLiveRuns = triggersv1beta1.DefaultMaxLiveRuns
	}
	if cfg.Rate <= 0 {
		cfg.Rate = serverconfig.DefaultTriggerRate
	}
	if cfg.Burst <= 0 {
		cfg.Burst = serverconfig.DefaultTriggerBurst
	}
	return &Trigger{cfg: cfg, runs: c, limiter: rate.NewLimiter(rate.Limit(cfg.Rate), cfg.Burst)}, nil
}

// Handler returns the CloudEvents HTTP receiver of the trigger, taking
// events of up to maxEventBytes: a larger one gets 413 when its length is
// declared, and an error when the body runs over.
func (t *Trigger) Handler(ctx context.Context, maxEventBytes int64) (http.Handler, error) {
	p, err := cloudevents.NewHTTP()
	if err != nil {
		return nil, fmt.Errorf("creating the CloudEvents protocol: %w", err)
	}
	h, err := cloudevents.NewHTTPReceiveHandler(ctx, p, t.Receive)
	if err != nil {
		return nil, fmt.Errorf("creating the CloudEvents receiver: %w", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "only POST is allowed", http.StatusMethodNotAllowed)
			return
		}
		if r.ContentLength > maxEventBytes {
			http.Error(w, fmt.Sprintf("the event is over %d bytes", maxEventBytes), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxEventBytes)
		h.ServeHTTP(w, r)
	}), nil
}

// Receive handles one event. An event of another type, of a source that is
// no listener of the trigger's namespace, or without a JSON document gets
// 400; one of a listener that no source names, or that fails the filters,
// is acknowledged and dropped. An event over the rate, or while the
// trigger has MaxLiveRuns runs not finished, gets 429. Otherwise Receive
// creates a run: a refused run gets 422, and an error worth retrying (the
// API server unreachable, busy or failing) 503. The listener retries 429
// and 503.
func (t *Trigger) Receive(ctx context.Context, e event.Event) protocol.Result {
	log := klog.FromContext(ctx).WithValues("workflowTrigger", klog.KRef(t.cfg.Namespace, t.cfg.Name), "eventID", e.ID())
	if e.Type() != EventType {
		log.Info("Refusing an event of an unknown type", "type", e.Type())
		return cehttp.NewResult(http.StatusBadRequest, "the event type is not %s", EventType)
	}
	ns, listener, ok := serverconfig.ParseSource(e.Source())
	if !ok || ns != t.cfg.Namespace {
		log.Info("Refusing an event from an unknown source", "source", e.Source())
		return cehttp.NewResult(http.StatusBadRequest, "the source is no EventListener of namespace %s", t.cfg.Namespace)
	}
	log = log.WithValues("eventListener", listener)
	doc := e.Data()
	if !json.Valid(doc) {
		log.Info("Refusing an event whose data is not JSON")
		return cehttp.NewResult(http.StatusBadRequest, "the event data is not JSON")
	}
	matched, named := false, false
	for i, src := range t.cfg.EventSources {
		if src.EventListenerName != listener {
			continue
		}
		named = true
		if ok, failure := filter.Match(doc, src.Filters); !ok {
			log.Info("An event failed a filter", "eventSource", i, "path", failure.Path, "reason", failure.Reason)
			continue
		}
		matched = true
		break
	}
	switch {
	case !named:
		log.Info("Dropping an event of a listener no event source names")
		return cloudevents.ResultACK
	case !matched:
		return cloudevents.ResultACK
	}
	if !t.limiter.Allow() {
		log.Info("Refusing an event over the rate of runs", "rate", t.cfg.Rate, "burst", t.cfg.Burst)
		return cehttp.NewResult(http.StatusTooManyRequests, "over the trigger's rate of runs")
	}
	live, err := t.liveRuns(ctx)
	switch {
	case t.notReady(ctx, err):
		log.Info("The API server forbade counting the runs before it was ready; retry", "err", err)
		return cehttp.NewResult(http.StatusServiceUnavailable, "the API server is not ready")
	case apierrors.IsForbidden(err):
		// Counting needs list; a service account granted only create, as
		// many were before the count existed, still starts runs, bounded
		// by the rate alone.
		log.Info("Not counting the runs not finished: the trigger's service account may not list WorkflowRuns", "maxLiveRuns", t.cfg.MaxLiveRuns)
	case err != nil:
		log.Error(err, "Counting the runs not finished failed")
		return cehttp.NewResult(http.StatusServiceUnavailable, "counting the trigger's runs failed")
	case live >= int(t.cfg.MaxLiveRuns):
		log.Info("Refusing an event: too many runs not finished", "live", live, "maxLiveRuns", t.cfg.MaxLiveRuns)
		return cehttp.NewResult(http.StatusTooManyRequests, "the trigger has %d runs not finished", live)
	}
	name, err := t.createRun(ctx, listener, e.ID(), doc)
	if err != nil {
		log.Error(err, "Creating a WorkflowRun failed")
		if t.notReady(ctx, err) {
			return cehttp.NewResult(http.StatusServiceUnavailable, "the API server is not ready")
		}
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsNotFound(err) {
			return cehttp.NewResult(http.StatusUnprocessableEntity, "the WorkflowRun was refused")
		}
		return cehttp.NewResult(http.StatusServiceUnavailable, "creating the WorkflowRun failed")
	}
	log.Info("Created a WorkflowRun", "workflowRun", klog.KRef(t.cfg.Namespace, name))
	return cloudevents.ResultACK
}

// readiness is a RunClient that can tell whether its API server is ready.
type readiness interface {
	Ready(ctx context.Context) error
}

// notReady tells whether err is a Forbidden of an API server that is not
// ready: one just started denies every request until its authorizer has
// synced, and its Forbidden is then no answer to keep. A client that cannot
// tell has every Forbidden taken as final.
func (t *Trigger) notReady(ctx context.Context, err error) bool {
	r, ok := t.runs.(readiness)
	if !ok || !apierrors.IsForbidden(err) {
		return false
	}
	return r.Ready(ctx) != nil
}

// liveRuns counts the trigger's runs that have not finished, as its API
// server has them.
func (t *Trigger) liveRuns(ctx context.Context) (int, error) {
	var list batchv1beta1.WorkflowRunList
	if err := t.runs.List(ctx, &list, client.InNamespace(t.cfg.Namespace), t.runSelector()); err != nil {
		return 0, fmt.Errorf("listing the trigger's WorkflowRuns: %w", err)
	}
	n := 0
	for i := range list.Items {
		if !list.Items[i].Status.Phase.Done() && list.Items[i].DeletionTimestamp.IsZero() {
			n++
		}
	}
	return n, nil
}

// runSelector selects the trigger's runs: by its UID, or by its name when
// the config has no UID.
func (t *Trigger) runSelector() client.MatchingLabels {
	if t.cfg.UID != "" {
		return client.MatchingLabels{serverconfig.WorkflowTriggerUIDLabelKey: string(t.cfg.UID)}
	}
	return client.MatchingLabels{serverconfig.WorkflowTriggerLabelKey: t.cfg.Name}
}

// createAttempts is how many names createRun tries when one is taken.
const createAttempts = 5

// createRun creates the run of an event of listener with the document doc
// and returns its name.
func (t *Trigger) createRun(ctx context.Context, listener, eventID string, doc []byte) (string, error) {
	spec := t.cfg.WorkflowRunSpec.DeepCopy()
	spec.Params = filter.SubstituteParams(doc, spec.Params)
	labels := map[string]string{}
	var owners []metav1.OwnerReference
	if t.cfg.UID != "" {
		labels[serverconfig.WorkflowTriggerUIDLabelKey] = string(t.cfg.UID)
		// Not blocking the trigger's deletion: that would take the right
		// to update the trigger's finalizers.
		owners = []metav1.OwnerReference{{
			APIVersion: triggersv1beta1.GroupVersion.String(), Kind: "WorkflowTrigger",
			Name: t.cfg.Name, UID: t.cfg.UID, Controller: ptr.To(true),
		}}
	}
	for key, value := range map[string]string{serverconfig.WorkflowTriggerLabelKey: t.cfg.Name, serverconfig.EventListenerLabelKey: listener} {
		// A name longer than a label value is not a label.
		if len(validation.IsValidLabelValue(value)) == 0 {
			labels[key] = value
		}
	}
	for attempt := 1; ; attempt++ {
		suffix, err := randomHex(5)
		if err != nil {
			return "", err
		}
		run := &batchv1beta1.WorkflowRun{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       t.cfg.Namespace,
				Name:            RunName(listener, t.cfg.Name, suffix),
				Labels:          labels,
				Annotations:     map[string]string{serverconfig.EventIDAnnotationKey: eventID},
				OwnerReferences: owners,
			},
			Spec: *spec,
		}
		err = t.runs.Create(ctx, run)
		if apierrors.IsAlreadyExists(err) && attempt < createAttempts {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("creating WorkflowRun %s: %w", run.Name, err)
		}
		return run.Name, nil
	}
}

// randomHex returns n random hex digits.
func randomHex(n int) (string, error) {
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return hex.EncodeToString(b)[:n], nil
}
