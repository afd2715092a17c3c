package jobs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// testDebugMode: debug mode keeps the environment but replaces the main
// container's command, per type or with sleep inf, and can drop init
// containers.
func testDebugMode(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := pytorchJob(ns, "debug", pytorchReplicas("master", 1, batchv1beta1.ReplicaRestartOnFailure), pytorchReplicas("worker", 1, batchv1beta1.ReplicaRestartOnFailure))
	for i := range job.Spec.ReplicaSpecs {
		job.Spec.ReplicaSpecs[i].Template.Spec.InitContainers = []corev1.Container{container("init", "true")}
		job.Spec.ReplicaSpecs[i].Template.Spec.Containers[0].Args = []string{"--epochs", "3"}
	}
	job.Spec.RunMode = &batchv1beta1.RunMode{Debug: &batchv1beta1.DebugMode{Enabled: true, ReplicaSpecs: []batchv1beta1.ReplicaDebugSet{
		{Type: "worker", SkipInitContainer: true, Command: []string{"/usr/bin/sshd", "-D"}},
	}}}
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "debug", "debug-master-0", "debug-worker-0")
	m, w := pods["debug-master-0"], pods["debug-worker-0"]
	if c := m.Spec.Containers[0]; !cmp.Equal(c.Command, []string{"sleep", "inf"}) || c.Args != nil || len(m.Spec.InitContainers) != 1 {
		t.Errorf("master: command %q args %q init %d", c.Command, c.Args, len(m.Spec.InitContainers))
	}
	if c := w.Spec.Containers[0]; !cmp.Equal(c.Command, []string{"/usr/bin/sshd", "-D"}) || c.Args != nil || len(w.Spec.InitContainers) != 0 {
		t.Errorf("worker: command %q args %q init %d", c.Command, c.Args, len(w.Spec.InitContainers))
	}
	if envOf(w.Spec.Containers[0])["MASTER_ADDR"] != "debug-master-0" {
		t.Errorf("worker env %v", envOf(w.Spec.Containers[0]))
	}
}

// testPauseResume: pausing deletes the pods and the job is Paused; resuming
// recreates them as resumeSpecs say, Resuming until they run.
func testPauseResume(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	gj := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pause"},
		Spec: batchv1beta1.GenericJobSpec{
			ReplicaSpecs: []batchv1beta1.ReplicaSpec{
				{Type: "ps", Template: template(container("main", "serve"))},
				{Type: "worker", Replicas: ptr.To[int32](2), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{container("init", "true")},
					Containers:     []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"train"}, Args: []string{"--from", "0"}}},
				}}},
			},
			RunMode: &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{ResumeSpecs: []batchv1beta1.ResumeSpec{
				{Type: "worker", SkipInitContainer: true, Command: []string{"train"}, Args: []string{"--resume"}},
			}}},
		},
	}
	if err := e.c.Create(ctx, gj); err != nil {
		t.Fatal(err)
	}
	e.waitPods(ctx, t, ns, "pause", "pause-ps-0", "pause-worker-0", "pause-worker-1")
	e.runAll(ctx, t, ns, "pause")
	e.waitPhase(ctx, t, gj, batchv1beta1.JobRunning)

	if err := e.update(ctx, t, gj, func() { gj.Spec.RunMode.Pause.Enabled = true }); err != nil {
		t.Fatal(err)
	}
	s := e.waitPhase(ctx, t, gj, batchv1beta1.JobPaused)
	if c := condition(t, s, batchv1beta1.JobPausedCond); c.Status != corev1.ConditionTrue {
		t.Errorf("Paused condition %+v", c)
	}
	e.waitPods(ctx, t, ns, "pause")
	testutil.Poll(ctx, t, "aggregate deleted 3", func() (bool, string, error) {
		e.get(ctx, t, gj)
		return gj.Status.Aggregate.Deleted == 3, "", nil
	})

	if err := e.update(ctx, t, gj, func() { gj.Spec.RunMode.Pause.Enabled = false }); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "pause", "pause-ps-0", "pause-worker-0", "pause-worker-1")
	e.get(ctx, t, gj)
	if gj.Status.Phase != batchv1beta1.JobResuming {
		t.Errorf("phase %s after resuming, want Resuming", gj.Status.Phase)
	}
	w := pods["pause-worker-1"]
	if c := w.Spec.Containers[0]; !cmp.Equal(c.Command, []string{"train"}) || !cmp.Equal(c.Args, []string{"--resume"}) || len(w.Spec.InitContainers) != 0 {
		t.Errorf("resumed worker: command %q args %q init %d", c.Command, c.Args, len(w.Spec.InitContainers))
	}
	if c := pods["pause-ps-0"].Spec.Containers[0]; !cmp.Equal(c.Command, []string{"serve"}) {
		t.Errorf("resumed ps: command %q", c.Command)
	}
	e.runAll(ctx, t, ns, "pause")
	s = e.waitPhase(ctx, t, gj, batchv1beta1.JobRunning)
	if c := condition(t, s, batchv1beta1.JobPausedCond); c.Status != corev1.ConditionFalse || c.Reason != "Resumed" {
		t.Errorf("Paused condition %+v", c)
	}
}

// testPausedFromStart: a job created paused creates no pods.
func testPausedFromStart(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := pytorchJob(ns, "idle", pytorchReplicas("worker", 2, batchv1beta1.ReplicaRestartOnFailure))
	job.Spec.RunMode = &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{Enabled: true}}
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	e.waitPhase(ctx, t, job, batchv1beta1.JobPaused)
	if pods := e.pods(ctx, t, ns, "idle"); len(pods) != 0 {
		t.Errorf("%d pods of a paused job", len(pods))
	}
}

// testStaleAddress: a resumed replica is recreated only once its Service
// no longer resolves to the address of its earlier pod (a peer given that
// address gets "no route to host"), and the others do not wait for it.
// The pods here get no addresses, so the EndpointSlice controller publishes
// none: the test writes the slice it would leave behind, labelled as it
// labels them but managed by another name, so that the controller leaves
// it alone.
func testStaleAddress(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := pytorchJob(ns, "stale",
		pytorchReplicas("master", 1, batchv1beta1.ReplicaRestartOnFailure),
		pytorchReplicas("worker", 1, batchv1beta1.ReplicaRestartOnFailure))
	job.Spec.RunMode = &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{}}
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "stale", "stale-master-0", "stale-worker-0")
	e.runAll(ctx, t, ns, "stale")
	e.waitPhase(ctx, t, job, batchv1beta1.JobRunning)

	svc := &corev1.Service{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stale-master-0"}, svc); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: "integration-test"}
	for k, v := range svc.Labels {
		labels[k] = v
	}
	old := pods["stale-master-0"]
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: "stale-master-0-x1", Labels: labels},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{"10.244.0.9"},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Terminating: ptr.To(true)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: old.Name, UID: old.UID},
		}},
	}
	if err := e.c.Create(ctx, slice); err != nil {
		t.Fatal(err)
	}

	if err := e.update(ctx, t, job, func() { job.Spec.RunMode.Pause.Enabled = true }); err != nil {
		t.Fatal(err)
	}
	e.waitPhase(ctx, t, job, batchv1beta1.JobPaused)
	e.waitPods(ctx, t, ns, "stale")
	if err := e.update(ctx, t, job, func() { job.Spec.RunMode.Pause.Enabled = false }); err != nil {
		t.Fatal(err)
	}
	e.waitPods(ctx, t, ns, "stale", "stale-worker-0")
	e.waitEvent(ctx, t, ns, "stale", "StaleAddress", "Service stale-master-0 still resolves to the address of the replica's earlier pod")
	if p := e.pods(ctx, t, ns, "stale")["stale-master-0"]; p != nil {
		t.Fatalf("stale-master-0 recreated while its Service still resolved to %v", slice.Endpoints[0].Addresses)
	}

	// The EndpointSlice controller drops the address: the master comes.
	slice.Endpoints = nil
	if err := e.c.Update(ctx, slice); err != nil {
		t.Fatal(err)
	}
	e.waitPods(ctx, t, ns, "stale", "stale-master-0", "stale-worker-0")
}
