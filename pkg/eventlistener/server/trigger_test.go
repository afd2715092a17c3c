package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener/filter"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// runName is the seed's shape of a run's name.
var runName = regexp.MustCompile(`^event-listener-sample-workflow-trigger-sample-[0-9a-f]{5}$`)

func triggerConfig() serverconfig.TriggerConfig {
	return serverconfig.TriggerConfig{
		Namespace: "demo",
		Name:      "workflow-trigger-sample",
		EventSources: []triggersv1beta1.EventSource{
			{
				EventListenerName: "event-listener-sample",
				Filters: []triggersv1beta1.Filter{
					{Path: "body.object_kind", Type: triggersv1beta1.JSONString, Values: []string{"merge_request"}},
					{Path: "header.X-Gitlab-Event", Type: triggersv1beta1.JSONString, Values: []string{"Merge Request Hook"}},
				},
			},
			{
				EventListenerName: "other-listener",
				Filters:           []triggersv1beta1.Filter{{Path: "body.n", Type: triggersv1beta1.JSONNumber, Values: []string{"1"}}},
			},
		},
		WorkflowRunSpec: batchv1beta1.WorkflowRunSpec{
			WorkflowTemplateRef: "workflow-template-sample",
			Params: []batchv1beta1.Param{
				{Name: "message", Value: "$(body.hello)"},
				{Name: "event", Value: "$(header.X-Gitlab-Event)"},
				{Name: "missing", Value: "[$(body.nothing.here)]"},
			},
		},
	}
}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := batchv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// newEvent is the event a listener makes of a request with header and
// body.
func newEvent(t *testing.T, source string, header http.Header, body string) event.Event {
	t.Helper()
	doc, err := filter.Document(header, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	e := cloudevents.NewEvent()
	e.SetID("event-1")
	e.SetSource(source)
	e.SetType(EventType)
	if err := e.SetData(cloudevents.ApplicationJSON, doc); err != nil {
		t.Fatal(err)
	}
	return e
}

func gitlabHeader() http.Header {
	return http.Header{"X-Gitlab-Event": {"Merge Request Hook"}, "Content-Type": {"application/json"}}
}

// runs lists the runs of c.
func runs(t *testing.T, c client.Client) []batchv1beta1.WorkflowRun {
	t.Helper()
	var list batchv1beta1.WorkflowRunList
	if err := c.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// statusOf is the HTTP status a receiver's result replies with.
func statusOf(res protocol.Result) int {
	if res == nil || cloudevents.IsACK(res) {
		if r, ok := errors.AsType[*cehttp.Result](res); ok {
			return r.StatusCode
		}
		return http.StatusOK
	}
	if r, ok := errors.AsType[*cehttp.Result](res); ok {
		return r.StatusCode
	}
	return http.StatusInternalServerError
}

func TestTriggerReceive(t *testing.T) {
	source := serverconfig.Source("demo", "event-listener-sample")
	tests := []struct {
		name       string
		event      func(t *testing.T) event.Event
		wantStatus int
		wantRuns   int
	}{
		{
			name: "passes the filters",
			event: func(t *testing.T) event.Event {
				return newEvent(t, source, gitlabHeader(), `{"object_kind": "merge_request", "hello": "world"}`)
			},
			wantStatus: http.StatusOK, wantRuns: 1,
		},
		{
			name:       "fails a body filter",
			event:      func(t *testing.T) event.Event { return newEvent(t, source, gitlabHeader(), `{"object_kind": "push"}`) },
			wantStatus: http.StatusOK,
		},
		{
			name:       "fails a header filter",
			event:      func(t *testing.T) event.Event { return newEvent(t, source, nil, `{"object_kind": "merge_request"}`) },
			wantStatus: http.StatusOK,
		},
		{
			name: "the other source's filters",
			event: func(t *testing.T) event.Event {
				return newEvent(t, serverconfig.Source("demo", "other-listener"), nil, `{"n": 1.0}`)
			},
			wantStatus: http.StatusOK, wantRuns: 1,
		},
		{
			name: "sources are independent",
			event: func(t *testing.T) event.Event {
				return newEvent(t, serverconfig.Source("demo", "other-listener"), gitlabHeader(), `{"object_kind": "merge_request"}`)
			},
			wantStatus: http.StatusOK,
		},
		{
			name: "a listener no source names",
			event: func(t *testing.T) event.Event {
				return newEvent(t, serverconfig.Source("demo", "stranger"), gitlabHeader(), `{}`)
			},
			wantStatus: http.StatusOK,
		},
		{
			name: "another namespace's listener",
			event: func(t *testing.T) event.Event {
				return newEvent(t, serverconfig.Source("prod", "event-listener-sample"), gitlabHeader(), `{"object_kind": "merge_request"}`)
			},
			wantStatus: http.StatusBadRequest,
		},
		{
			name: "a foreign source",
			event: func(t *testing.T) event.Event {
				return newEvent(t, "https://github.com/x/y", gitlabHeader(), `{"object_kind": "merge_request"}`)
			},
			wantStatus: http.StatusBadRequest,
		},
		{
			name: "another type",
			event: func(t *testing.T) event.Event {
				e := newEvent(t, source, gitlabHeader(), `{"object_kind": "merge_request"}`)
				e.SetType("com.example.other")
				return e
			},
			wantStatus: http.StatusBadRequest,
		},
		{
			name: "data that is not JSON",
			event: func(t *testing.T) event.Event {
				e := newEvent(t, source, gitlabHeader(), `{}`)
				_ = e.SetData("text/plain", []byte("hello"))
				return e
			},
			wantStatus: http.StatusBadRequest,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(newScheme(t)).Build()
			tr, err := NewTrigger(triggerConfig(), c)
			if err != nil {
				t.Fatal(err)
			}
			res := tr.Receive(context.Background(), tt.event(t))
			if got := statusOf(res); got != tt.wantStatus {
				t.Errorf("status %d (%v), want %d", got, res, tt.wantStatus)
			}
			if got := len(runs(t, c)); got != tt.wantRuns {
				t.Errorf("%d runs, want %d", got, tt.wantRuns)
			}
		})
	}
}

func TestTriggerRun(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).Build()
	tr, err := NewTrigger(triggerConfig(), c)
	if err != nil {
		t.Fatal(err)
	}
	e := newEvent(t, serverconfig.Source("demo", "event-listener-sample"), gitlabHeader(), `{"object_kind": "merge_request", "hello": "world $(body.object_kind)"}`)
	if res := tr.Receive(context.Background(), e); !cloudevents.IsACK(res) {
		t.Fatalf("Receive = %v", res)
	}
	got := runs(t, c)
	if len(got) != 1 {
		t.Fatalf("%d runs, want 1", len(got))
	}
	run := got[0]
	if !runName.MatchString(run.Name) || run.Namespace != "demo" {
		t.Errorf("run %s/%s, want demo/<listener>-<trigger>-<5 hex>", run.Namespace, run.Name)
	}
	wantLabels := map[string]string{serverconfig.WorkflowTriggerLabelKey: "workflow-trigger-sample", serverconfig.EventListenerLabelKey: "event-listener-sample"}
	if diff := cmp.Diff(wantLabels, run.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if run.Annotations[serverconfig.EventIDAnnotationKey] != "event-1" {
		t.Errorf("annotations %v, want the event ID", run.Annotations)
	}
	want := triggerConfig().WorkflowRunSpec
	want.Params = []batchv1beta1.Param{
		{Name: "message", Value: "world $(body.object_kind)"},
		{Name: "event", Value: "Merge Request Hook"},
		{Name: "missing", Value: "[]"},
	}
	if diff := cmp.Diff(want, run.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if tr.cfg.WorkflowRunSpec.Params[0].Value != "$(body.hello)" {
		t.Error("creating a run changed the trigger's spec")
	}
}

func TestTriggerCreateErrors(t *testing.T) {
	gr := schema.GroupResource{Group: "batch.tensorstack.dev", Resource: "workflowruns"}
	tests := []struct {
		name       string
		errs       []error
		readyz     *readyClient // a client that asks the API server's /readyz, answered its err
		wantStatus int
		wantTries  int
	}{
		{name: "forbidden", errs: []error{apierrors.NewForbidden(gr, "x", errors.New("no"))}, wantStatus: http.StatusUnprocessableEntity, wantTries: 1},
		{name: "forbidden by a ready API server", errs: []error{apierrors.NewForbidden(gr, "x", errors.New("no"))}, readyz: &readyClient{}, wantStatus: http.StatusUnprocessableEntity, wantTries: 1},
		{name: "forbidden by an API server not ready", errs: []error{apierrors.NewForbidden(gr, "x", errors.New("no"))}, readyz: &readyClient{err: errors.New("informer-sync not ok")}, wantStatus: http.StatusServiceUnavailable, wantTries: 1},
		{name: "invalid", errs: []error{apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "WorkflowRun"}, "x", nil)}, wantStatus: http.StatusUnprocessableEntity, wantTries: 1},
		{name: "timeout", errs: []error{apierrors.NewTimeoutError("slow", 1)}, wantStatus: http.StatusServiceUnavailable, wantTries: 1},
		{name: "unreachable", errs: []error{errors.New("connection refused")}, wantStatus: http.StatusServiceUnavailable, wantTries: 1},
		{name: "name taken", errs: []error{apierrors.NewAlreadyExists(gr, "x"), apierrors.NewAlreadyExists(gr, "y")}, wantStatus: http.StatusOK, wantTries: 3},
		{
			name:       "names always taken",
			errs:       []error{apierrors.NewAlreadyExists(gr, "1"), apierrors.NewAlreadyExists(gr, "2"), apierrors.NewAlreadyExists(gr, "3"), apierrors.NewAlreadyExists(gr, "4"), apierrors.NewAlreadyExists(gr, "5")},
			wantStatus: http.StatusServiceUnavailable, wantTries: 5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tries := 0
			var names []string
			c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					tries++
					names = append(names, obj.GetName())
					if tries <= len(tt.errs) {
						return tt.errs[tries-1]
					}
					return c.Create(ctx, obj, opts...)
				},
			}).Build()
			var runs RunClient = c
			if tt.readyz != nil {
				runs = readyClient{Client: c, err: tt.readyz.err}
			}
			tr, err := NewTrigger(triggerConfig(), runs)
			if err != nil {
				t.Fatal(err)
			}
			e := newEvent(t, serverconfig.Source("demo", "event-listener-sample"), gitlabHeader(), `{"object_kind": "merge_request"}`)
			res := tr.Receive(context.Background(), e)
			if got := statusOf(res); got != tt.wantStatus {
				t.Errorf("status %d (%v), want %d", got, res, tt.wantStatus)
			}
			if tries != tt.wantTries {
				t.Errorf("%d tries (%v), want %d", tries, names, tt.wantTries)
			}
			for _, n := range names {
				if !runName.MatchString(n) {
					t.Errorf("tried the name %q", n)
				}
			}
		})
	}
}

// TestListenerToTrigger runs a listener and a trigger as HTTP servers and
// checks that a POST to the listener becomes a run, carried as a binary
// CloudEvent.
func TestListenerToTrigger(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).Build()
	tr, err := NewTrigger(triggerConfig(), c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, err := tr.Handler(ctx, DefaultMaxEventBytes)
	if err != nil {
		t.Fatal(err)
	}
	binary := make(chan bool, 10)
	triggerSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		binary <- r.Header.Get("Ce-Id") != "" && r.Header.Get("Content-Type") == "application/json"
		h.ServeHTTP(w, r)
	}))
	defer triggerSrv.Close()

	sender, err := NewSender(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l := newTestListener(t, listenerConfig(triggerSrv.URL), sender)
	listenerSrv := httptest.NewServer(Mux(l, readyTrue()))
	defer listenerSrv.Close()

	send := func(body string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, listenerSrv.URL+"/t9k/workflow/triggers/demo/event-listener-sample", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Gitlab-Event", "Merge Request Hook")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("listener replied %d", resp.StatusCode)
		}
	}
	send(`{"object_kind": "merge_request", "hello": "world"}`)
	send(`{"object_kind": "push", "hello": "filtered"}`)
	l.Close(context.Background())

	for range 2 {
		if !<-binary {
			t.Error("the listener did not send a binary-mode CloudEvent")
		}
	}
	got := runs(t, c)
	if len(got) != 1 {
		t.Fatalf("%d runs, want 1 (one event filtered out)", len(got))
	}
	if !runName.MatchString(got[0].Name) || got[0].Spec.Params[0].Value != "world" || got[0].Spec.Params[1].Value != "Merge Request Hook" {
		t.Errorf("run %s params %v", got[0].Name, got[0].Spec.Params)
	}
}

func TestTriggerHandlerMethods(t *testing.T) {
	tr, err := NewTrigger(triggerConfig(), fake.NewClientBuilder().WithScheme(newScheme(t)).Build())
	if err != nil {
		t.Fatal(err)
	}
	h, err := tr.Handler(context.Background(), DefaultMaxEventBytes)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", w.Code)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"not": "an event"}`)))
	if w.Code/100 == 2 {
		t.Errorf("a POST that is no CloudEvent: %d, want an error", w.Code)
	}

	// Events over the limit.
	small, err := tr.Handler(context.Background(), 64)
	if err != nil {
		t.Fatal(err)
	}
	big := `{"object_kind": "merge_request", "hello": "` + strings.Repeat("x", 64) + `"}`
	req := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(big))
		r.Header.Set("Ce-Id", "1")
		r.Header.Set("Ce-Specversion", "1.0")
		r.Header.Set("Ce-Source", serverconfig.Source("demo", "event-listener-sample"))
		r.Header.Set("Ce-Type", EventType)
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	w = httptest.NewRecorder()
	small.ServeHTTP(w, req())
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("an event over the limit: %d, want 413", w.Code)
	}
	chunked := req()
	chunked.ContentLength = -1
	w = httptest.NewRecorder()
	small.ServeHTTP(w, chunked)
	if w.Code/100 == 2 {
		t.Errorf("an event of unknown length over the limit: %d, want an error", w.Code)
	}
	if n := len(runs(t, tr.runs.(client.Client))); n != 0 {
		t.Errorf("%d runs from events over the limit", n)
	}
}

// readyClient is a RunClient whose API server answers err at /readyz.
type readyClient struct {
	client.Client
	err error
}

func (c readyClient) Ready(context.Context) error { return c.err }
