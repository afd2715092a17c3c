package jobs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// testSubstitution: the GenericJob variables are replaced in command, args
// and env values; an unknown one is left as written and reported; Services
// expose every replica under its name.
func testSubstitution(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	c := corev1.Container{
		Name: "tensorflow", Image: "tensorflow/tensorflow:2.11.0",
		Command: []string{"python", "/mnt/training.py", "--type=$(type)"},
		Args:    []string{"--rank=$(rank)", "--workers=$(replicas[worker])", "--home=$(HOME)", "--bad=$(service.port[grpc])"},
		Env: []corev1.EnvVar{{Name: "TF_CONFIG",
			Value: `{"task":{"type":"$(type)","index":$(rank)},"cluster":{"worker":["$(service.worker[0].host):$(service.port[http])","$(service.worker[1].host):$(service.port[http])"]}}`}},
	}
	gj := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vars"},
		Spec: batchv1beta1.GenericJobSpec{
			ReplicaSpecs: []batchv1beta1.ReplicaSpec{{Type: "worker", Replicas: ptr.To[int32](2), Template: template(c)}},
			Service:      &batchv1beta1.ServiceOption{Ports: []corev1.ServicePort{{Name: "http", Port: 2222}}},
		},
	}
	if err := e.c.Create(ctx, gj); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "vars", "vars-worker-0", "vars-worker-1")
	got := pods["vars-worker-1"].Spec.Containers[0]
	if want := []string{"python", "/mnt/training.py", "--type=worker"}; !cmp.Equal(got.Command, want) {
		t.Errorf("command %q, want %q", got.Command, want)
	}
	if want := []string{"--rank=1", "--workers=2", "--home=$(HOME)", "--bad=$(service.port[grpc])"}; !cmp.Equal(got.Args, want) {
		t.Errorf("args %q, want %q", got.Args, want)
	}
	if want := `{"task":{"type":"worker","index":1},"cluster":{"worker":["vars-worker-0:2222","vars-worker-1:2222"]}}`; got.Env[0].Value != want {
		t.Errorf("TF_CONFIG %s, want %s", got.Env[0].Value, want)
	}
	for _, name := range []string{"vars-worker-0", "vars-worker-1"} {
		svc := &corev1.Service{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
			t.Fatalf("Service %s: %v", name, err)
		}
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 2222 || svc.Spec.ClusterIP != corev1.ClusterIPNone {
			t.Errorf("Service %s: %+v", name, svc.Spec)
		}
	}
	e.waitEvent(ctx, t, ns, "vars", "UnknownVariable", "variable $(service.port[grpc]) left as written: no port named grpc in spec.service.ports")
}

// testFinishRules: any success rule whose replicas all succeeded ends the
// job; a failure rule fails it with the manual's message.
func testFinishRules(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	never := &batchv1beta1.RestartPolicy{Policy: batchv1beta1.RestartPolicyNever}
	spec := func() batchv1beta1.GenericJobSpec {
		return batchv1beta1.GenericJobSpec{
			ReplicaSpecs: []batchv1beta1.ReplicaSpec{
				{Type: "master", Replicas: ptr.To[int32](3), RestartPolicy: never, Template: template(container("main", "run"))},
				{Type: "worker", Replicas: ptr.To[int32](3), RestartPolicy: never, Template: template(container("main", "run"))},
			},
			SuccessRules: []batchv1beta1.FinishRule{{"master": {0}}, {"worker": {0, 1, 2}}, {"master": {2}, "worker": {0, 1}}},
			FailureRules: []batchv1beta1.FinishRule{{"worker": {0}}, {"master": {1}, "worker": {1}}},
		}
	}
	ok := &batchv1beta1.GenericJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ok"}, Spec: spec()}
	bad := &batchv1beta1.GenericJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"}, Spec: spec()}
	for _, j := range []*batchv1beta1.GenericJob{ok, bad} {
		if err := e.c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	names := func(j string) []string {
		var out []string
		for _, typ := range []string{"master", "worker"} {
			for _, r := range []string{"0", "1", "2"} {
				out = append(out, j+"-"+typ+"-"+r)
			}
		}
		return out
	}
	okPods := e.waitPods(ctx, t, ns, "ok", names("ok")...)
	e.runAll(ctx, t, ns, "ok")
	// master 2 and workers 0, 1 succeed: the third rule holds; master 1
	// failing alone holds no failure rule.
	e.setPod(ctx, t, okPods["ok-master-1"], corev1.PodFailed, map[string]int32{"main": 1})
	e.setPod(ctx, t, okPods["ok-master-2"], corev1.PodSucceeded, nil)
	e.setPod(ctx, t, okPods["ok-worker-0"], corev1.PodSucceeded, nil)
	e.get(ctx, t, ok)
	if ok.Status.Phase == batchv1beta1.JobSucceeded {
		t.Fatal("succeeded before its rule held")
	}
	e.setPod(ctx, t, okPods["ok-worker-1"], corev1.PodSucceeded, nil)
	e.waitPhase(ctx, t, ok, batchv1beta1.JobSucceeded)

	badPods := e.waitPods(ctx, t, ns, "bad", names("bad")...)
	e.runAll(ctx, t, ns, "bad")
	e.setPod(ctx, t, badPods["bad-master-1"], corev1.PodFailed, map[string]int32{"main": 1})
	e.setPod(ctx, t, badPods["bad-worker-1"], corev1.PodFailed, map[string]int32{"main": 1})
	s := e.waitPhase(ctx, t, bad, batchv1beta1.JobFailed)
	for _, typ := range []batchv1beta1.JobConditionType{batchv1beta1.JobFailedCond, batchv1beta1.JobCompleted} {
		if c := condition(t, s, typ); c.Message != `The job is failed with rule: { "master": [1], "worker": [1] }` || c.Reason != "Failed" {
			t.Errorf("%s condition %+v", typ, c)
		}
	}
}
