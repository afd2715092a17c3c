package jobs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

func pytorchJob(ns, name string, specs ...batchv1beta1.PyTorchReplicaSpec) *batchv1beta1.PyTorchTrainingJob {
	return &batchv1beta1.PyTorchTrainingJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       batchv1beta1.PyTorchTrainingJobSpec{ReplicaSpecs: specs},
	}
}

func pytorchReplicas(typ string, n int32, policy batchv1beta1.ReplicaRestartPolicy) batchv1beta1.PyTorchReplicaSpec {
	return batchv1beta1.PyTorchReplicaSpec{
		Type: typ, Replicas: ptr.To(n), RestartPolicy: policy,
		Template: template(container("pytorch", "python", "train.py")),
	}
}

func envOf(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		out[e.Name] = e.Value
	}
	return out
}

// testPyTorchLifecycle runs a master and two workers to success: pods and
// headless Services named <job>-<type>-<rank>, the torch.distributed
// environment, restartPolicy Never, labels, events, and the status the
// manual shows.
func testPyTorchLifecycle(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := pytorchJob(ns, "mnist",
		pytorchReplicas("master", 1, batchv1beta1.ReplicaRestartOnFailure),
		pytorchReplicas("worker", 2, batchv1beta1.ReplicaRestartOnFailure))
	job.Spec.ReplicaSpecs[0].Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "mnist", "mnist-master-0", "mnist-worker-0", "mnist-worker-1")
	for name, rank := range map[string]string{"mnist-master-0": "0", "mnist-worker-0": "1", "mnist-worker-1": "2"} {
		p := pods[name]
		index := name[len(name)-1:]
		want := map[string]string{
			"PYTHONUNBUFFERED": "1", "MASTER_ADDR": "mnist-master-0", "PET_MASTER_ADDR": "mnist-master-0",
			"MASTER_PORT": "23456", "PET_MASTER_PORT": "23456", "WORLD_SIZE": "3", "RANK": rank, "PET_NODE_RANK": rank, "PET_NNODES": "3",
		}
		if diff := cmp.Diff(want, envOf(p.Spec.Containers[0])); diff != "" {
			t.Errorf("%s env (-want +got):\n%s", name, diff)
		}
		if p.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s restartPolicy %s, want Never", name, p.Spec.RestartPolicy)
		}
		for k, v := range map[string]string{
			"tensorstack.dev/component": "pytorchtrainingjob", "tensorstack.dev/component-type": "user",
			"pytorchtrainingjob": "mnist", "pytorchtrainingjob-replica": name,
			"batch.tensorstack.dev/job-name": "mnist",
		} {
			if p.Labels[k] != v {
				t.Errorf("%s label %s=%q, want %q", name, k, p.Labels[k], v)
			}
		}
		if ref := metav1.GetControllerOf(p); ref == nil || ref.Kind != "PyTorchTrainingJob" || ref.Name != "mnist" {
			t.Errorf("%s controller %+v", name, ref)
		}
		svc := &corev1.Service{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc); err != nil {
			t.Errorf("Service %s: %v", name, err)
		} else if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.Selector["batch.tensorstack.dev/replica-index"] != index {
			t.Errorf("Service %s: clusterIP %q selector %v", name, svc.Spec.ClusterIP, svc.Spec.Selector)
		}
	}
	s := e.waitPhase(ctx, t, job, batchv1beta1.JobPending)
	if s.StartTime == nil {
		t.Error("no startTime")
	}

	e.runAll(ctx, t, ns, "mnist")
	e.waitPhase(ctx, t, job, batchv1beta1.JobRunning)
	testutil.Poll(ctx, t, "Running condition", func() (bool, string, error) {
		e.get(ctx, t, job)
		c := condition(t, &job.Status.JobStatus, batchv1beta1.JobRunningCond)
		return c.Status == corev1.ConditionTrue, c.Message, nil
	})
	if c := condition(t, &job.Status.JobStatus, batchv1beta1.JobRunningCond); c.Message != "All pods are running normally." || c.Reason != "-" {
		t.Errorf("Running condition %+v", c)
	}
	if c := condition(t, &job.Status.JobStatus, batchv1beta1.JobInitialized); c.Status != corev1.ConditionTrue || c.Message != "The job has been initialized successfully." {
		t.Errorf("Initialized condition %+v", c)
	}
	// Nothing changes, so nothing is written: the controller reconciles the
	// job again (an annotation changed) and writes nothing, then or later.
	rv := e.pokeReconciled(ctx, t, "PyTorchTrainingJob", job)
	time.Sleep(2 * time.Second)
	if e.get(ctx, t, job); job.ResourceVersion != rv {
		t.Errorf("a running job was written again (version %s, then %s): %+v", rv, job.ResourceVersion, job.Status)
	}

	e.setPod(ctx, t, pods["mnist-master-0"], corev1.PodSucceeded, nil)
	s = e.waitPhase(ctx, t, job, batchv1beta1.JobSucceeded)
	for typ, want := range map[batchv1beta1.JobConditionType]corev1.ConditionStatus{
		batchv1beta1.JobCompleted: corev1.ConditionTrue, batchv1beta1.JobRunningCond: corev1.ConditionFalse, batchv1beta1.JobFailedCond: corev1.ConditionFalse,
	} {
		if c := condition(t, s, typ); c.Status != want || c.Reason != "Succeeded" || c.Message != "The job has finished successfully." {
			t.Errorf("%s condition %+v", typ, c)
		}
	}
	if s.CompletionTime == nil {
		t.Error("no completionTime")
	}
	for _, name := range []string{"mnist-master-0", "mnist-worker-0", "mnist-worker-1"} {
		e.waitEvent(ctx, t, ns, "mnist", "Created", "Created pod "+name)
	}
	e.waitEvent(ctx, t, ns, "mnist", "Succeeded", "The job has finished successfully.")
	wantAgg := batchv1beta1.Aggregate{Running: 2, Succeeded: 1}
	if diff := cmp.Diff(wantAgg, s.Aggregate); diff != "" {
		t.Errorf("aggregate (-want +got):\n%s", diff)
	}
	if len(s.Tasks) != 2 || s.Tasks[0].Type != "master" || len(s.Tasks[1].Replicas) != 2 {
		t.Fatalf("tasks %+v", s.Tasks)
	}
	m := s.Tasks[0].Replicas[0]
	want := batchv1beta1.ReplicaStatus{Name: "mnist-master-0", UID: pods["mnist-master-0"].UID, Phase: "Succeeded",
		Containers: []batchv1beta1.ContainerStatus{{Name: "pytorch", State: "Terminated"}}}
	if diff := cmp.Diff(want, m, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("master replica status (-want +got):\n%s", diff)
	}
}
