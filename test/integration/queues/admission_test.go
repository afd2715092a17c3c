package queues

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/test/testutil"
)

// testClosedQueue: a closed queue refuses new pods, naming itself.
func testClosedQueue(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	q := e.queue(ctx, t, "closed", func(s *schedv1beta1.QueueSpec) { s.Closed = true })
	err := e.c.Create(ctx, podSpec(ns, "p", "1", map[string]string{schedv1beta1.QueueLabel: q.Name}))
	refused(t, "a pod of a closed queue", err, fmt.Sprintf("queue %q is closed", q.Name))
	err = e.c.Create(ctx, podSpec(ns, "p", "1", map[string]string{schedv1beta1.QueueLabel: "no-such-queue"}))
	refused(t, "a pod of a missing queue", err, `queue "no-such-queue" does not exist`)
	plain := podSpec(ns, "plain", "1", map[string]string{schedv1beta1.QueueLabel: q.Name})
	plain.Spec.SchedulerName = ""
	e.createPod(ctx, t, plain) // the default scheduler's pods are in no queue
}

// cpuJob returns a GenericJob in queue with replicas pods of cpu each,
// limits only.
func cpuJob(ns, name, queue string, replicas int32, cpu string) *batchv1beta1.GenericJob {
	return &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: batchv1beta1.GenericJobSpec{
			Scheduler: &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: queue}},
			ReplicaSpecs: []batchv1beta1.ReplicaSpec{{Type: "worker", Replicas: ptr.To(replicas),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "main", Image: "busybox", Command: []string{"train"},
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
				}}}}}},
		},
	}
}

// testSeedQuota is the manual's example: quota cpu 40 with 38 allocated
// refuses a workload of cpu 4, naming the queue and cpu, and admits one of
// cpu 2. A job admitted before the queue filled still gets its pods.
func testSeedQuota(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	q := e.queue(ctx, t, "seed", func(s *schedv1beta1.QueueSpec) {
		s.Quota = &schedv1beta1.Quota{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("40")}}
	})
	labels := map[string]string{schedv1beta1.QueueLabel: q.Name}
	for i, cpu := range []string{"30", "8"} {
		p := e.createPod(ctx, t, podSpec(ns, fmt.Sprintf("held-%d", i), cpu, labels))
		e.bind(ctx, t, p, "node-1")
	}
	testutil.Poll(ctx, t, "38 allocated", func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKeyFromObject(q), q)
		return err == nil && cpuOf(q.Status.Allocated) == "38", fmt.Sprintf("allocated %v", q.Status.Allocated), err
	})

	want := fmt.Sprintf("queue %q: cpu requests 4 would exceed its quota 40 (38 allocated)", q.Name)
	refused(t, "a pod of cpu 4", e.c.Create(ctx, podSpec(ns, "big", "4", labels)), want)
	refused(t, "a job of 2 pods of cpu 2", e.c.Create(ctx, cpuJob(ns, "big", q.Name, 2, "2")), want)

	// A job of cpu 2, paused, is admitted; then a pod of cpu 2 fills the
	// queue; the job's pod, once resumed, was admitted with the job.
	job := cpuJob(ns, "fits", q.Name, 1, "2")
	job.Spec.RunMode = &batchv1beta1.RunMode{Pause: &batchv1beta1.PauseMode{Enabled: true}}
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatalf("a job of cpu 2 was refused: %v", err)
	}
	small := e.createPod(ctx, t, podSpec(ns, "small", "2", labels))
	e.bind(ctx, t, small, "node-1")
	testutil.Poll(ctx, t, "40 allocated", func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKeyFromObject(q), q)
		return err == nil && cpuOf(q.Status.Allocated) == "40", fmt.Sprintf("allocated %v", q.Status.Allocated), err
	})
	refused(t, "a pod of cpu 1 in a full queue", e.c.Create(ctx, podSpec(ns, "one", "1", labels)),
		fmt.Sprintf("queue %q: cpu requests 1 would exceed its quota 40 (40 allocated)", q.Name))
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
		t.Fatal(err)
	}
	job.Spec.RunMode.Pause.Enabled = false
	if err := e.c.Update(ctx, job); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(ctx, t, "the job's pod", func() (bool, string, error) {
		var list corev1.PodList
		err := e.c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{jobs.JobNameLabel: "fits"})
		return err == nil && len(list.Items) == 1, fmt.Sprintf("%d pods", len(list.Items)), err
	})
}

// testNamespaceSelector: a queue refuses pods of namespaces its
// namespaceSelector does not match.
func testNamespaceSelector(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	allowed := e.namespace(t, map[string]string{"team": "vision"})
	other := e.namespace(t, map[string]string{"team": "nlp"})
	q := e.queue(ctx, t, "vision", func(s *schedv1beta1.QueueSpec) {
		s.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "vision"}}
	})
	labels := map[string]string{schedv1beta1.QueueLabel: q.Name}
	e.createPod(ctx, t, podSpec(allowed, "p", "1", labels))
	refused(t, "a pod of another team", e.c.Create(ctx, podSpec(other, "p", "1", labels)),
		fmt.Sprintf("queue %q: namespace %q does not match its namespaceSelector", q.Name, other))
	none := e.queue(ctx, t, "nobody", func(s *schedv1beta1.QueueSpec) { s.NamespaceSelector = nil })
	refused(t, "a pod of a queue without namespaceSelector", e.c.Create(ctx, podSpec(allowed, "q", "1",
		map[string]string{schedv1beta1.QueueLabel: none.Name})), "no namespaceSelector")
}

// testShape: a queue with a resource shape profile refuses a pod larger
// than every shape, naming the profile and the resource.
func testShape(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: schedv1beta1.ShapesNamespace}}); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: schedv1beta1.ShapesNamespace, Name: schedv1beta1.ShapesConfigMap},
		Data:       map[string]string{"small": "- {cpu: \"4\", memory: 16Gi}\n- {cpu: \"2\", memory: 32Gi}\n"},
	}); err != nil {
		t.Fatal(err)
	}
	ns := e.namespace(t, nil)
	q := e.queue(ctx, t, "shaped", func(s *schedv1beta1.QueueSpec) { s.ResourceShapeProfile = ptr.To("small") })
	labels := map[string]string{schedv1beta1.QueueLabel: q.Name}
	e.createPod(ctx, t, podSpec(ns, "fits", "4", labels))
	refused(t, "a pod of cpu 8", e.c.Create(ctx, podSpec(ns, "big", "8", labels)),
		fmt.Sprintf("queue %q: a pod's cpu request is larger than every shape of profile \"small\"", q.Name))
	missing := e.queue(ctx, t, "unshaped", func(s *schedv1beta1.QueueSpec) { s.ResourceShapeProfile = ptr.To("large") })
	refused(t, "a pod of a queue whose profile does not exist", e.c.Create(ctx, podSpec(ns, "any", "1",
		map[string]string{schedv1beta1.QueueLabel: missing.Name})), `"large"`)
}

// testJobRefused: a training job whose replicas together exceed the quota
// is refused at creation, its template limits counted as requests.
func testJobRefused(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	q := e.queue(ctx, t, "jobs", func(s *schedv1beta1.QueueSpec) {
		s.Quota = &schedv1beta1.Quota{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}
	})
	replica := func(typ string, n int32) batchv1beta1.PyTorchReplicaSpec {
		return batchv1beta1.PyTorchReplicaSpec{Type: typ, Replicas: ptr.To(n), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "pytorch", Image: "pytorch",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
		}}}
	}
	pj := &batchv1beta1.PyTorchTrainingJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "train"}}
	pj.Spec.ReplicaSpecs = []batchv1beta1.PyTorchReplicaSpec{replica("master", 1), replica("worker", 4)}
	pj.Spec.Scheduler = &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: q.Name}}
	refused(t, "a job of 5 cpu in a queue of 4", e.c.Create(ctx, pj),
		fmt.Sprintf("queue %q: cpu requests 5 would exceed its quota 4 (0 allocated)", q.Name))

	pj.Spec.ReplicaSpecs = []batchv1beta1.PyTorchReplicaSpec{replica("master", 1), replica("worker", 3)}
	if err := e.c.Create(ctx, pj); err != nil {
		t.Fatalf("a job of 4 cpu in a queue of 4 was refused: %v", err)
	}
	testutil.Poll(ctx, t, "the job's pods", func() (bool, string, error) {
		var list corev1.PodList
		err := e.c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{jobs.JobNameLabel: "train"})
		return err == nil && len(list.Items) == 4, fmt.Sprintf("%d pods", len(list.Items)), err
	})
	pg := &schedv1beta1.PodGroup{}
	testutil.Poll(ctx, t, "the job's PodGroup status", func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "train"}, pg)
		return err == nil && pg.Status.Pending == 4 && groupCond(pg, schedv1beta1.PodGroupSufficientMember).Status == metav1.ConditionTrue,
			fmt.Sprintf("%+v", pg.Status), client.IgnoreNotFound(err)
	})

	other := &batchv1beta1.XGBoostTrainingJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lost"}}
	other.Spec.Scheduler = &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: "no-such-queue"}}
	other.Spec.ReplicaSpecs = []batchv1beta1.XGBoostReplicaSpec{{Type: "master", Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "xgboost", Image: "xgboost"}}}}}}
	refused(t, "a job of a missing queue", e.c.Create(ctx, other), `queue "no-such-queue" does not exist`)
}
