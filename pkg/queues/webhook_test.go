package queues

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/accelstack/accelstack/api"
	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/jobs/genericjob"
	"github.com/accelstack/accelstack/pkg/jobs/pytorch"
)

// webhookEnv is the seed's admission example: queue "research" with quota
// cpu 40 allowing namespaces labelled team=a, and 38 cpu held by bound pods.
type webhookEnv struct {
	pods   *podValidator
	jobs   *jobValidator
	grants *grantMarker
}

func newWebhookEnv(t *testing.T, objs ...client.Object) *webhookEnv {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := api.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	base := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: map[string]string{"team": "a"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
		&schedv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "research"}, Spec: schedv1beta1.QueueSpec{
			Quota:             &schedv1beta1.Quota{Requests: rl("cpu", "40")},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
		}},
		testPod("held-1", "30", inQueue("research"), bound("n1"), phase(corev1.PodRunning)),
		testPod("held-2", "8", inQueue("research"), bound("n2")),
		testPod("done", "8", inQueue("research"), bound("n2"), phase(corev1.PodSucceeded)),
		testPod("waiting", "8", inQueue("research")),
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(append(base, objs...)...).
		WithInterceptorFuncs(interceptor.Funcs{Create: grantsOfVisionUsers}).
		WithIndex(&corev1.Pod{}, groupIndex, podGroupKey).
		WithIndex(&corev1.Pod{}, queueLabelIndex, podQueueLabel).
		WithIndex(&schedv1beta1.PodGroup{}, groupQueueIndex, groupQueue).
		Build()
	m := &members{pods: c, groups: c}
	a := &admitter{client: c, apiReader: c, members: m}
	kinds := map[schema.GroupKind]jobs.Kind{
		{Group: "batch.tensorstack.dev", Kind: "GenericJob"}:         genericjob.Kind{},
		{Group: "batch.tensorstack.dev", Kind: "PyTorchTrainingJob"}: pytorch.Kind{},
	}
	d := admission.NewDecoder(s)
	return &webhookEnv{
		pods:   &podValidator{admitter: a, jobKinds: kinds, decoder: d},
		jobs:   &jobValidator{admitter: a, jobKinds: kinds, decoder: d},
		grants: &grantMarker{admitter: a, jobKinds: kinds, reviews: c, decoder: d},
	}
}

func request(t *testing.T, kind string, obj any) admission.Request {
	return requestIn(t, "ns", kind, obj)
}

func requestIn(t *testing.T, ns, kind string, obj any) admission.Request {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	gvk := metav1.GroupVersionKind{Group: "batch.tensorstack.dev", Version: "v1beta1", Kind: kind}
	if kind == "Pod" {
		gvk = metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Namespace: ns, Kind: gvk, Object: runtime.RawExtension{Raw: raw},
	}}
}

func checkResponse(t *testing.T, r admission.Response, wantAllowed bool, contains ...string) {
	t.Helper()
	msg := ""
	if r.Result != nil {
		msg = r.Result.Message
	}
	if r.Allowed != wantAllowed {
		t.Fatalf("allowed = %t (%q), want %t", r.Allowed, msg, wantAllowed)
	}
	for _, s := range contains {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q does not contain %q", msg, s)
		}
	}
}

func TestPodWebhook(t *testing.T) {
	job := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train", UID: "job-uid"},
		Spec: batchv1beta1.GenericJobSpec{
			Scheduler: &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: "research"}},
		},
	}
	e := newWebhookEnv(t, job,
		&schedv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "shut"}, Spec: schedv1beta1.QueueSpec{Closed: true, NamespaceSelector: &metav1.LabelSelector{}}},
		&schedv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}, Spec: schedv1beta1.PodGroupSpec{Queue: "research"}},
	)
	ownedBy := func(uid string) podOpt {
		return func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch.tensorstack.dev/v1beta1", Kind: "GenericJob", Name: "train", UID: k8stypes.UID(uid), Controller: ptr.To(true)}}
		}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		allowed  bool
		contains []string
	}{
		{"seed example: 4 cpu over quota 40 with 38 allocated", testPod("new", "4", inQueue("research")), false,
			[]string{`queue "research": cpu requests 4 would exceed its quota 40 (38 allocated)`}},
		{"2 cpu fits", testPod("new", "2", inQueue("research")), true, nil},
		{"the group's queue counts", testPod("new", "4", inGroup("g", "")), false, []string{`"research"`, "cpu"}},
		{"missing queue", testPod("new", "1", inQueue("nope")), false, []string{`queue "nope" does not exist`}},
		{"closed queue", testPod("new", "1", inQueue("shut")), false, []string{`queue "shut" is closed`}},
		{"another scheduler", func() *corev1.Pod { p := testPod("new", "100", inQueue("nope")); p.Spec.SchedulerName = ""; return p }(), true, nil},
		{"no queue", testPod("new", "100"), true, nil},
		{"pod of a job admitted with the queue skips the quota", testPod("new", "4", inQueue("research"), ownedBy("job-uid")), true, nil},
		{"an owner reference to another job does not", testPod("new", "4", inQueue("research"), ownedBy("forged")), false, []string{"quota"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.pod.Namespace = ""
			checkResponse(t, e.pods.Handle(ctx, request(t, "Pod", tc.pod)), tc.allowed, tc.contains...)
		})
	}
}

func TestPodWebhookNamespace(t *testing.T) {
	e := newWebhookEnv(t)
	p := testPod("new", "1", inQueue("research"))
	p.Namespace = ""
	checkResponse(t, e.pods.Handle(context.Background(), requestIn(t, "other", "Pod", p)), false,
		`queue "research": namespace "other" does not match its namespaceSelector`)
}

func TestJobWebhook(t *testing.T) {
	e := newWebhookEnv(t)
	cpuLimit := func(cpu string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "pytorch", Resources: corev1.ResourceRequirements{Limits: rl("cpu", cpu)},
		}}}}
	}
	job := func(queue string, workers int32, cpu string) *batchv1beta1.PyTorchTrainingJob {
		pj := &batchv1beta1.PyTorchTrainingJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pj"}}
		pj.Spec.ReplicaSpecs = []batchv1beta1.PyTorchReplicaSpec{
			{Type: "master", Replicas: ptr.To[int32](1), Template: cpuLimit(cpu)},
			{Type: "worker", Replicas: ptr.To(workers), Template: cpuLimit(cpu)},
		}
		if queue != "" {
			pj.Spec.Scheduler = &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: queue}}
		}
		return pj
	}
	ctx := context.Background()
	// 1 master + 3 workers of 1 cpu (limits only) ask 4 of the 2 left.
	checkResponse(t, e.jobs.Handle(ctx, request(t, "PyTorchTrainingJob", job("research", 3, "1"))), false,
		`queue "research": cpu requests 4 would exceed its quota 40 (38 allocated)`)
	checkResponse(t, e.jobs.Handle(ctx, request(t, "PyTorchTrainingJob", job("research", 1, "1"))), true)
	checkResponse(t, e.jobs.Handle(ctx, request(t, "PyTorchTrainingJob", job("", 100, "1"))), true)
	checkResponse(t, e.jobs.Handle(ctx, request(t, "PyTorchTrainingJob", job("missing", 0, "1"))), false, `queue "missing" does not exist`)
	checkResponse(t, e.jobs.Handle(ctx, requestIn(t, "other", "PyTorchTrainingJob", job("research", 0, "1"))), false, `namespace "other"`)
}

func TestJobPods(t *testing.T) {
	job := &jobs.Job{Replicas: []jobs.Replica{
		{Replicas: 2, Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: rl("nvidia.com/gpu", "2", "cpu", "4")}}}}}},
		{Replicas: 0, Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1")}}}}}},
	}}
	pods := jobPods(job)
	if len(pods) != 2 {
		t.Fatalf("pods %v", pods)
	}
	assertResources(t, pods[1], rl("nvidia.com/gpu", "2", "cpu", "4"))
}

// grantsOfVisionUsers answers SubjectAccessReviews as an API server whose
// RBAC grants the group vision-users the use of queue research, and
// creates every other object.
func grantsOfVisionUsers(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	sar, ok := obj.(*authorizationv1.SubjectAccessReview)
	if !ok {
		return c.Create(ctx, obj, opts...)
	}
	ra := sar.Spec.ResourceAttributes
	sar.Status.Allowed = slices.Contains(sar.Spec.Groups, "vision-users") && ra != nil &&
		ra.Group == "scheduler.tensorstack.dev" && ra.Resource == "queues" && ra.Name == "research" && ra.Verb == "use"
	return nil
}

// TestGrantWebhook: the grant webhook marks the new workloads of a grant
// holder in a namespace the queue's namespaceSelector does not admit, and
// no others.
func TestGrantWebhook(t *testing.T) {
	e := newWebhookEnv(t)
	job := func() *batchv1beta1.GenericJob {
		return &batchv1beta1.GenericJob{Spec: batchv1beta1.GenericJobSpec{
			Scheduler: &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: "research"}},
		}}
	}
	cron := map[string]any{"apiVersion": "batch.tensorstack.dev/v1beta1", "kind": "CronWorkflowRun",
		"spec": map[string]any{"workflowRun": map[string]any{"spec": map[string]any{
			"scheduler": map[string]any{"t9kScheduler": map[string]any{"queue": "research"}}}}}}
	annotated := testPod("annotated", "1", inQueue("research"))
	annotated.Annotations = map[string]string{"team": "vision"}
	marked := testPod("marked", "1", inQueue("research"))
	marked.Annotations = map[string]string{schedv1beta1.QueueGrantAnnotation: "other"}
	tests := []struct {
		name, ns, kind string
		obj            any
		groups         []string
		wantMark       bool
	}{
		{"a holder's pod outside the namespaces", "other", "Pod", testPod("p", "1", inQueue("research")), []string{"vision-users"}, true},
		{"a holder's job outside the namespaces", "other", "GenericJob", job(), []string{"vision-users"}, true},
		{"a holder's pod with annotations of its own", "other", "Pod", annotated, []string{"vision-users"}, true},
		{"a holder's CronWorkflowRun outside the namespaces", "other", "CronWorkflowRun", cron, []string{"vision-users"}, true},
		{"a pod of someone without the grant", "other", "Pod", testPod("p", "1", inQueue("research")), []string{"nlp-users"}, false},
		{"a holder's pod inside the namespaces", "ns", "Pod", testPod("p", "1", inQueue("research")), []string{"vision-users"}, false},
		{"a holder's pod in a missing queue", "other", "Pod", testPod("p", "1", inQueue("missing")), []string{"vision-users"}, false},
		{"a pod marked already", "other", "Pod", marked, []string{"vision-users"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := requestIn(t, tc.ns, tc.kind, tc.obj)
			req.UserInfo.Username, req.UserInfo.Groups = "alice", tc.groups
			r := e.grants.Handle(context.Background(), req)
			if !r.Allowed {
				t.Fatalf("refused: %v", r.Result)
			}
			patches, err := json.Marshal(r.Patches)
			if err != nil {
				t.Fatal(err)
			}
			mark := strings.Contains(string(patches), `"`+schedv1beta1.QueueGrantAnnotation+`":"research"`) ||
				strings.Contains(string(patches), `queue-grant","value":"research"`)
			if mark != tc.wantMark {
				t.Errorf("marked = %t (patches %v), want %t", mark, r.Patches, tc.wantMark)
			}
		})
	}
}
