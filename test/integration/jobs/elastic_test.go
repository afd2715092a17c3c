package jobs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/test/testutil"
)

// testElastic: an elastic torchrun job runs expectedReplicas replicas, set
// through the scale subresource as an autoscaler would; scaling up adds
// ranks and scaling down removes the highest, never touching the others.
func testElastic(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	spec := pytorchReplicas("node", 1, batchv1beta1.ReplicaRestartOnFailure)
	spec.Template.Spec.Containers[0].Command = []string{"python"}
	spec.Template.Spec.Containers[0].Args = []string{"train.py", "--epochs=3"}
	job := pytorchJob(ns, "elastic", spec)
	job.Spec.TorchrunConfig = &batchv1beta1.TorchrunConfig{Enabled: true, ProcPerNode: "2", MaxRestarts: ptr.To[int32](3), ExtraOptions: []string{"--log_dir=/tmp/torchrun"}}
	job.Spec.Elastic = &batchv1beta1.ElasticConfig{Enabled: true, MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](3), ExpectedReplicas: ptr.To[int32](2)}
	job.Spec.Scheduler = &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: "default", Priority: 10}}
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "elastic", "elastic-node-0", "elastic-node-1")
	c := pods["elastic-node-1"].Spec.Containers[0]
	wantArgs := []string{"--nnodes=1:3", "--nproc_per_node=2", "--rdzv_backend=c10d", "--rdzv_endpoint=elastic-node-0:23456",
		"--rdzv_id=" + string(job.UID), "--max_restarts=3", "--log_dir=/tmp/torchrun", "train.py", "--epochs=3"}
	if !cmp.Equal(c.Command, []string{"torchrun"}) || !cmp.Equal(c.Args, wantArgs) {
		t.Errorf("command %q args %q, want torchrun %q", c.Command, c.Args, wantArgs)
	}
	if env := envOf(c); env["PET_NNODES"] != "1:3" || env["PET_NPROC_PER_NODE"] != "2" {
		t.Errorf("env %v", env)
	}
	pg := &schedulerv1beta1.PodGroup{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "elastic"}, pg); err != nil {
		t.Fatal(err)
	}
	if pg.Spec.MinMember != 1 || pg.Spec.Queue != "default" || pg.Spec.Priority != 10 {
		t.Errorf("PodGroup spec %+v, want minMember 1 (elastic.minReplicas)", pg.Spec)
	}
	e.runAll(ctx, t, ns, "elastic")
	testutil.Poll(ctx, t, "status.elastic", func() (bool, string, error) {
		e.get(ctx, t, job)
		el := job.Status.Elastic
		return el != nil && el.CurrentReplicas == 2 && el.Selector == "batch.tensorstack.dev/job-name=elastic", "", nil
	})

	scale := &autoscalingv1.Scale{}
	if err := e.c.SubResource("scale").Get(ctx, job, scale); err != nil {
		t.Fatal(err)
	}
	if scale.Spec.Replicas != 2 || scale.Status.Replicas != 2 {
		t.Errorf("scale %+v", scale)
	}
	scale.Spec.Replicas = 3
	scale.ResourceVersion = "" // an autoscaler's blind write
	if err := e.c.SubResource("scale").Update(ctx, job, client.WithSubResourceBody(scale)); err != nil {
		t.Fatal(err)
	}
	up := e.waitPods(ctx, t, ns, "elastic", "elastic-node-0", "elastic-node-1", "elastic-node-2")
	for _, n := range []string{"elastic-node-0", "elastic-node-1"} {
		if up[n].UID != pods[n].UID {
			t.Errorf("%s was replaced when scaling up", n)
		}
	}

	if err := e.update(ctx, t, job, func() { job.Spec.Elastic.ExpectedReplicas = ptr.To[int32](1) }); err != nil {
		t.Fatal(err)
	}
	down := e.waitPods(ctx, t, ns, "elastic", "elastic-node-0")
	if down["elastic-node-0"].UID != pods["elastic-node-0"].UID {
		t.Error("elastic-node-0 was replaced when scaling down")
	}
	e.get(ctx, t, job)
	if job.Status.BackoffCount != 0 {
		t.Errorf("scaling counted %d restarts", job.Status.BackoffCount)
	}

	// Beyond maxReplicas: kept at the bound.
	if err := e.update(ctx, t, job, func() { job.Spec.Elastic.ExpectedReplicas = ptr.To[int32](9) }); err != nil {
		t.Fatal(err)
	}
	e.waitPods(ctx, t, ns, "elastic", "elastic-node-0", "elastic-node-1", "elastic-node-2")
}
