//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/serving"
	"github.com/accelstack/accelstack/pkg/serving/mlservice"
	"github.com/accelstack/accelstack/pkg/serving/router"
	"github.com/accelstack/accelstack/pkg/serving/simple"
	"github.com/accelstack/accelstack/test/cluster"
)

// servingTimeout bounds the waits of the serving tests: two predictors and
// a router start, each with a readiness probe.
const servingTimeout = 5 * time.Minute

// linearModel is the model the tests put in S3, and what the model
// server answers for linearInstances with it.
const linearModel = `{"weights": [1, 2, 3], "bias": 0.5}`

var (
	linearInstances   = [][]float64{{1, 1, 1}, {0, 0, 1}}
	linearPredictions = []float64{6.5, 3.5}
)

// TestSimpleMLServiceS3Model: a SimpleMLService with a custom server pod
// and an S3 model; the storage initializer downloads the model from the
// cluster's S3 server with the keys of a Secret that never appear in the
// pod, and the model server answers predictions with the downloaded
// weights (its default weights would answer 3 and 1).
func TestSimpleMLServiceS3Model(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), servingTimeout)
	defer cancel()
	ns := newNamespace(t)
	c := crClient(t)
	s := createLinearService(ctx, t, c, ns)
	if c := interactive.FindCondition(s.Status.Conditions, tensorstackv1beta1.ConditionModelDownloaded); c.Reason != "Downloaded" {
		t.Errorf("ModelDownloaded reason %q, want Downloaded", c.Reason)
	}

	pod := runningPod(ctx, t, ns, simple.LabelKey+"=linear")
	if len(pod.Spec.InitContainers) != 1 || pod.Spec.InitContainers[0].Name != serving.StorageInitializerName {
		t.Errorf("init containers %+v, want the storage initializer", pod.Spec.InitContainers)
	}
	srv, err := clus.S3(ctx)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := json.Marshal(pod.Spec)
	if strings.Contains(string(spec), srv.SecretKey) || strings.Contains(string(spec), srv.AccessKey) {
		t.Error("the pod spec holds the S3 keys; they belong in the Secret")
	}

	var out prediction
	predict(ctx, t, "http://"+pod.Status.PodIP+":8080", "", "linear", &out)
	if fmt.Sprint(out.Predictions) != fmt.Sprint(linearPredictions) {
		t.Errorf("predictions %v, want %v from the downloaded model", out.Predictions, linearPredictions)
	}
}

// createLinearService creates the SimpleMLService linear in ns, whose
// model server downloads linearModel from a new bucket with the keys of
// the Secret s3, and waits until it is Ready.
func createLinearService(ctx context.Context, t *testing.T, c client.Client, ns string) *tensorstackv1beta1.SimpleMLService {
	t.Helper()
	_, bucket := newBucket(t, map[string]string{"linear/model.json": linearModel})
	createS3Secret(t, ns)
	s := &tensorstackv1beta1.SimpleMLService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "linear"},
		Spec: tensorstackv1beta1.SimpleMLServiceSpec{
			Storage: &tensorstackv1beta1.ModelStorage{S3: &tensorstackv1beta1.S3ModelStorage{
				SecretRef: tensorstackv1beta1.SecretRef{Name: "s3"}, URI: "s3://" + bucket + "/linear/",
			}},
			Custom: &tensorstackv1beta1.CustomServer{Spec: corev1.PodSpec{Containers: []corev1.Container{
				modelServer("server", "--model-dir=/var/lib/t9k/model", "--name=linear"),
			}}},
		},
	}
	if err := c.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitServing(ctx, t, c, s, func() []tensorstackv1beta1.WorkloadCondition { return s.Status.Conditions },
		tensorstackv1beta1.ConditionModelDownloaded, tensorstackv1beta1.ConditionReady)
	return s
}

// TestMLServiceCanarySplitAndLogger: an MLService with releases a and b of
// one runtime, b the canary at 20%, both with a logger. 1000 requests to
// the global URL through the router split within four standard deviations
// of the binomial's 200 for b; the logger sink in this process receives
// 2000 events, a request and a response sharing an id per request, each
// response's source the release that answered it. A release's own URL
// reaches only that release.
func TestMLServiceCanarySplitAndLogger(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), servingTimeout)
	defer cancel()
	ns := newNamespace(t)
	c := crClient(t)
	sink := startSink(t)

	rt := &tensorstackv1beta1.MLServiceRuntime{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "linear"},
		Spec: tensorstackv1beta1.MLServiceRuntimeSpec{Template: tensorstackv1beta1.RuntimeTemplate{Spec: corev1.PodSpec{
			Containers: []corev1.Container{modelServer("user-container", "--name=linear", "--tag={{.TAG}}")},
		}}},
	}
	release := func(name string) tensorstackv1beta1.ReleaseSpec {
		return tensorstackv1beta1.ReleaseSpec{Name: name, Predictor: tensorstackv1beta1.PredictorSpec{
			Model:  &tensorstackv1beta1.ModelSpec{Runtime: "linear", Parameters: map[string]string{"TAG": name}},
			Logger: &tensorstackv1beta1.LoggerSpec{URLs: []string{sink.url}},
		}}
	}
	m := &tensorstackv1beta1.MLService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "split"},
		Spec: tensorstackv1beta1.MLServiceSpec{
			Releases: []tensorstackv1beta1.ReleaseSpec{release("a"), release("b")},
			Default:  "a", Canary: "b", CanaryTrafficPercent: ptr.To[int32](20),
		},
	}
	for _, o := range []client.Object{rt, m} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	waitServing(ctx, t, c, m, func() []tensorstackv1beta1.WorkloadCondition { return m.Status.Conditions }, tensorstackv1beta1.ConditionReady)
	if m.Status.Backend != "raw" {
		t.Errorf("backend %q, want raw (no Knative here)", m.Status.Backend)
	}
	for _, r := range m.Status.Releases {
		if want := map[string]int32{"a": 80, "b": 20}[r.Name]; r.TrafficPercent != want || !r.Ready {
			t.Errorf("release %s: ready %v traffic %d%%, want ready at %d%%", r.Name, r.Ready, r.TrafficPercent, want)
		}
	}
	// No kube-proxy here: the test reaches the router by its pod's
	// address, naming the Service in the Host header as a client of the
	// Service would; the router reaches the predictors through their
	// headless Services.
	routerPod := runningPod(ctx, t, ns, mlservice.LabelKey+"=split,"+mlservice.ComponentLabelKey+"=router")
	base := "http://" + routerPod.Status.PodIP + ":8080"
	global := "split." + ns + ".svc.cluster.local"

	// The router's first requests may come before the cluster's DNS has
	// the predictors' addresses: wait until each release's URL answers a
	// model's status, which the checks below leave out of the events.
	for _, r := range []string{"a", "b"} {
		host := "split-predict-" + r + "." + ns + ".svc.cluster.local"
		var last string
		err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/models/linear", nil)
			if err != nil {
				return false, err
			}
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				last = err.Error()
				return false, nil //nolint:nilerr // retried until the timeout
			}
			resp.Body.Close()
			last = resp.Status
			return resp.StatusCode == http.StatusOK, nil
		})
		if err != nil {
			t.Fatalf("release %s through the router: %s\nrouter log:\n%s", r, last, podLogs(t, ns, routerPod.Name))
		}
	}

	const n, p = 1000, 0.2
	tags := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var failed atomic.Bool
	work := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				var out prediction
				if failed.Load() {
					continue // drain after the first failure, reported once
				}
				if !predict(ctx, t, base, global, "linear", &out) {
					failed.Store(true)
					continue
				}
				mu.Lock()
				tags[out.Tag]++
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		select {
		case work <- i:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		t.Fatalf("requests failed; answered by %v\nrouter log:\n%s", tags, podLogs(t, ns, routerPod.Name))
	}
	bound := 4 * math.Sqrt(n*p*(1-p))
	if tags["a"]+tags["b"] != n || math.Abs(float64(tags["b"])-n*p) > bound {
		t.Errorf("1000 requests answered by %v, want b within %.0f±%.0f and no other", tags, n*p, bound)
	}
	t.Logf("1000 requests: %v (b expected %.0f±%.0f)", tags, n*p, bound)

	// Every request and response of the predictions reaches the sink:
	// 2000 events.
	var got []sinkEvent
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(context.Context) (bool, error) {
		got = sink.predictions()
		return len(got) >= 2*n, nil
	})
	if err != nil {
		t.Fatalf("the logger sink received %d events of the predictions, want %d\nrouter log:\n%s", len(got), 2*n, podLogs(t, ns, routerPod.Name))
	}
	time.Sleep(2 * time.Second) // an extra event would arrive by now
	got = sink.predictions()
	if len(got) != 2*n {
		t.Errorf("the logger sink received %d events of the predictions, want %d", len(got), 2*n)
	}
	checkEvents(t, got, ns, tags)

	// A release's own URL reaches that release alone.
	for range 10 {
		var out prediction
		predict(ctx, t, base, "split-predict-b."+ns+".svc.cluster.local", "linear", &out)
		if out.Tag != "b" {
			t.Fatalf("the URL of release b answered by %q", out.Tag)
		}
	}

	// t9k mls set-canary makes b the default with no canary: the router
	// then sends every request to b.
	if out, err := t9k(t, "mls", "set-canary", "split", "--default=b", "--canary=", "-p", ns); err != nil {
		t.Fatalf("t9k mls set-canary: %v\n%s", err, out)
	}
	// The router gets its configuration at start: a new router pod takes
	// over, and the old one may answer meanwhile.
	var answered []string
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		base := "http://" + runningPod(ctx, t, ns, mlservice.LabelKey+"=split,"+mlservice.ComponentLabelKey+"=router").Status.PodIP + ":8080"
		answered = answered[:0]
		for range 10 {
			var out prediction
			if err := tryPredict(ctx, base, global, "linear", &out); err != nil {
				answered = append(answered, err.Error())
				return false, nil
			}
			answered = append(answered, out.Tag)
		}
		return strings.Count(strings.Join(answered, ""), "b") == 10, nil
	})
	if err != nil {
		t.Errorf("after t9k mls set-canary --default=b --canary=, the global URL still answers by %v: %v", answered, err)
	}
}

// checkEvents checks the logger's events of the split: per id one request
// and one response, the response's source the release whose tag its body
// holds, and as many of each release as requests it answered.
func checkEvents(t *testing.T, events []sinkEvent, ns string, tags map[string]int) {
	t.Helper()
	byID := map[string][]sinkEvent{}
	for _, e := range events {
		byID[e.id] = append(byID[e.id], e)
	}
	sources := map[string]int{}
	bad := 0
	for id, es := range byID {
		if len(es) != 2 || es[0].typ == es[1].typ {
			if bad++; bad <= 3 {
				t.Errorf("id %s: %d events %+v, want a request and a response", id, len(es), es)
			}
			continue
		}
		for _, e := range es {
			sources[e.source]++
			if e.mlservice != "split" || e.namespace != ns || e.component != router.ComponentPredict || e.inferenceURL != "/v1/models/linear:predict" {
				if bad++; bad <= 3 {
					t.Errorf("event %+v", e)
				}
			}
			if e.typ == router.TypeResponse {
				var out prediction
				if err := json.Unmarshal(e.body, &out); err != nil || "split-predict-"+out.Tag != e.source {
					if bad++; bad <= 3 {
						t.Errorf("response event from %s with body %q", e.source, e.body)
					}
				}
			} else if e.typ == router.TypeRequest && !bytes.Contains(e.body, []byte(`"instances"`)) {
				if bad++; bad <= 3 {
					t.Errorf("request event with body %q", e.body)
				}
			}
		}
	}
	want := map[string]int{"split-predict-a": 2 * tags["a"], "split-predict-b": 2 * tags["b"]}
	if fmt.Sprint(sources) != fmt.Sprint(want) {
		t.Errorf("events by source %v, want %v", sources, want)
	}
}

// modelServer is a container of the serving image running the model
// server with args, ready once its model answers.
func modelServer(name string, args ...string) corev1.Container {
	return corev1.Container{
		Name: name, Image: cluster.ServingImage,
		Command: []string{"/usr/bin/model-server"}, Args: args,
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/v1/models/linear", Port: intstr.FromInt32(8080)}},
			PeriodSeconds: 1,
		},
	}
}

// waitServing waits for the conditions types of obj to be True, reading
// them with conds after each Get.
func waitServing(ctx context.Context, t *testing.T, c client.Client, obj client.Object, conds func() []tensorstackv1beta1.WorkloadCondition, types ...string) {
	t.Helper()
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		for _, typ := range types {
			if c := interactive.FindCondition(conds(), typ); c == nil || c.Status != corev1.ConditionTrue {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		pods, _ := clus.Kubectl(context.Background(), "-n", obj.GetNamespace(), "get", "pods,svc,endpointslices", "-o", "wide")
		t.Fatalf("%s %s: conditions %v not all True: %+v\n%s", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), types, conds(), pods)
	}
}

// runningPod returns a running, ready pod of the selector in ns.
func runningPod(ctx context.Context, t *testing.T, ns, selector string) *corev1.Pod {
	t.Helper()
	var found *corev1.Pod
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, nil //nolint:nilerr // retried until the timeout
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; running(p) && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
				found = p
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no running pod of %s in %s: %v", selector, ns, err)
	}
	return found
}

// prediction is the model server's answer.
type prediction struct {
	Predictions []float64 `json:"predictions"`
	Tag         string    `json:"tag"`
}

// predict POSTs linearInstances to the model name at base, with the Host
// header host when not empty, and decodes the answer into out; it reports
// an error and returns false when the answer is not 200.
func predict(ctx context.Context, t *testing.T, base, host, name string, out *prediction) bool {
	t.Helper()
	if err := tryPredict(ctx, base, host, name, out); err != nil {
		t.Error(err)
		return false
	}
	return true
}

// tryPredict asks model name at base, with Host host unless empty, for
// the predictions of linearInstances into out.
func tryPredict(ctx context.Context, base, host, name string, out *prediction) error {
	body, _ := json.Marshal(map[string]any{"instances": linearInstances})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/models/"+name+":predict", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s (Host %s): %w", req.URL, host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s (Host %s): %s %s", req.URL, host, resp.Status, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("POST %s: %w in %q", req.URL, err, b)
	}
	return nil
}

// sinkEvent is a CloudEvent the sink received, in binary mode.
type sinkEvent struct {
	id, typ, source, component, inferenceURL, mlservice, namespace string
	body                                                           []byte
}

// logSink is an HTTP server of the test that keeps the events POSTed to
// it.
type logSink struct {
	url string
	mu  sync.Mutex
	got []sinkEvent
}

// predictions returns the events so far of requests to the predict path
// (the model's status, asked before, is left out).
func (s *logSink) predictions() []sinkEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sinkEvent
	for _, e := range s.got {
		if strings.HasSuffix(e.inferenceURL, ":predict") {
			out = append(out, e)
		}
	}
	return out
}

// startSink serves a logger sink on the cluster's gateway address, which
// pods reach (their default gateway, no masquerade), until the test ends.
func startSink(t *testing.T) *logSink {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(cluster.GatewayIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	s := &logSink{url: "http://" + l.Addr().String() + "/events"}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Method != http.MethodPost || r.Header.Get("Ce-Id") == "" {
			http.Error(w, "not a binary-mode CloudEvent", http.StatusBadRequest)
			return
		}
		h := r.Header.Get
		s.mu.Lock()
		s.got = append(s.got, sinkEvent{
			id: h("Ce-Id"), typ: h("Ce-Type"), source: h("Ce-Source"), component: h("Ce-Component"),
			inferenceURL: h("Ce-Inferenceurl"), mlservice: h("Ce-Mlservicename"), namespace: h("Ce-Namespace"), body: body,
		})
		s.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}
