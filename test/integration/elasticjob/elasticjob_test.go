package elasticjob

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
	"github.com/accelstack/accelstack/pkg/elasticjob"
	"github.com/accelstack/accelstack/test/testutil"
)

// TestElasticJob runs every ElasticJob test against one control plane.
func TestElasticJob(t *testing.T) {
	e := startEnv(t)
	t.Run("Env", e.testEnv)
	t.Run("ScalePlan", e.testScalePlan)
	t.Run("FaultRelaunch", e.testFaultRelaunch)
	t.Run("Evicted", e.testEvicted)
	t.Run("WorkersDecide", e.testWorkersDecide)
	t.Run("MasterDecides", e.testMasterDecides)
	t.Run("Refused", e.testRefused)
	t.Run("Examples", e.testExamples)
}

// testEnv: a parameter-server job's pods carry DLRover's labels, environment
// in DLRover's order and TF_CONFIG, and each rank has a Service on the
// type's port.
func (e *env) testEnv(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	job := newJob(ns, "tf", elasticv1alpha1.ParameterServerStrategy, map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{
		"ps": replica(2, 0), "worker": replica(2, 0), "chief": replica(1, 0),
	})
	job.Labels = map[string]string{"team": "a"}
	testutil.MustCreate(ctx, t, e.c, job)
	pods := e.waitPods(ctx, t, ns, "tf", "tf-edljob-ps-0", "tf-edljob-ps-1", "tf-edljob-worker-0", "tf-edljob-worker-1", "tf-edljob-chief-0")

	w1 := pods["tf-edljob-worker-1"]
	wantLabels := map[string]string{
		"team": "a", "app": "dlrover", "elasticjob.dlrover/name": "tf", "elasticjob.dlrover/replica-type": "worker",
		"elasticjob.dlrover/replica-index": "1", "elasticjob.dlrover/rank-index": "1", "restart-count": "0",
	}
	if diff := cmp.Diff(wantLabels, w1.Labels); diff != "" {
		t.Errorf("worker-1 labels (-want +got):\n%s", diff)
	}
	ps := `["tf-edljob-ps-0:2222","tf-edljob-ps-1:2222"]`
	wantEnv := []string{
		"WORKER_TYPE=worker", "WORKER_ID=1", "WORKER_RANK=1", "GRPC_ENABLE_FORK_SUPPORT=False", "POD_NAME=<metadata.name>", "WORKER_NUM=2",
		`TF_CONFIG={"cluster":{"worker":["tf-edljob-worker-0:3333","tf-edljob-worker-1:3333"],"ps":` + ps + `,"chief":["tf-edljob-chief-0:3333"]},"task":{"type":"worker","index":1}}`,
	}
	if diff := cmp.Diff(wantEnv, podEnv(w1)); diff != "" {
		t.Errorf("worker-1 env (-want +got):\n%s", diff)
	}
	wantPS := `{"cluster":{"worker":["tf-edljob-worker-0:3333","tf-edljob-worker-1:3333"],"ps":` + ps + `,"chief":["tf-edljob-chief-0:3333"]},"task":{"type":"ps","index":1}}`
	if got := envValue(t, pods["tf-edljob-ps-1"], "TF_CONFIG"); got != wantPS {
		t.Errorf("ps-1 TF_CONFIG\n got %s\nwant %s", got, wantPS)
	}
	if got := podEnv(pods["tf-edljob-chief-0"]); len(got) != 6 {
		t.Errorf("chief env %v, want 6 variables", got)
	}
	if ref := w1.OwnerReferences; len(ref) != 1 || ref[0].Kind != "ElasticJob" || ref[0].Name != "tf" || ref[0].Controller == nil || !*ref[0].Controller {
		t.Errorf("worker-1 owner references %+v", ref)
	}
	for name, port := range map[string]int32{"tf-edljob-ps-1": 2222, "tf-edljob-worker-1": 3333, "tf-edljob-chief-0": 3333} {
		svc := &corev1.Service{}
		testutil.Poll(ctx, t, "Service "+name, func() (bool, string, error) {
			err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc)
			return err == nil, fmt.Sprint(err), client.IgnoreNotFound(err)
		})
		typ := strings.Split(name, "-")[2]
		wantSel := map[string]string{"app": "dlrover", "elasticjob.dlrover/name": "tf", "elasticjob.dlrover/replica-type": typ,
			"elasticjob.dlrover/rank-index": name[len(name)-1:]}
		if diff := cmp.Diff(wantSel, svc.Spec.Selector); diff != "" {
			t.Errorf("Service %s selector (-want +got):\n%s", name, diff)
		}
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != port || svc.Spec.Type != corev1.ServiceTypeClusterIP {
			t.Errorf("Service %s spec %+v, want one port %d", name, svc.Spec, port)
		}
	}
	j := e.waitPhase(ctx, t, ns, "tf", elasticv1alpha1.JobPending)
	if c := j.Status.Conditions[0]; c.Type != elasticv1alpha1.JobCreated || c.Reason != "JobCreated" || c.Message != "ElasticJob tf is created." {
		t.Errorf("first condition %+v", c)
	}
	if j.Status.StartTime == nil {
		t.Error("no start time")
	}
}

// testScalePlan: ScalePlans scale a job up and down, whoever wrote them,
// new pods get the plan's resources, a createPods entry for a rank that
// has a pod counts as its relaunch, and the plans end Succeeded.
func (e *env) testScalePlan(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	testutil.MustCreate(ctx, t, e.c, newJob(ns, "ar", elasticv1alpha1.AllreduceStrategy, map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{
		"worker": replica(2, 0),
	}))
	pods := e.waitPods(ctx, t, ns, "ar", "ar-edljob-worker-0", "ar-edljob-worker-1")
	if got := podEnv(pods["ar-edljob-worker-0"]); !slices.Contains(got, "RDZV_ENDPOINT=<status.podIP>") {
		t.Errorf("worker-0 env %v, want RDZV_ENDPOINT from its own IP", got)
	}
	e.setPod(ctx, t, ns, "ar-edljob-worker-0", corev1.PodRunning, "")
	e.setPod(ctx, t, ns, "ar-edljob-worker-1", corev1.PodRunning, "")
	e.waitPhase(ctx, t, ns, "ar", elasticv1alpha1.JobRunning)

	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	testutil.MustCreate(ctx, t, e.c, newPlan(ns, "ar-scaleplan-0", "ar", "auto", elasticv1alpha1.ScaleSpec{
		ReplicaResourceSpecs: map[elasticv1alpha1.ReplicaType]elasticv1alpha1.ReplicaResourceSpec{"worker": {Replicas: 4, Resource: cpu}},
	}))
	plan := e.waitPlan(ctx, t, ns, "ar-scaleplan-0", elasticv1alpha1.JobSucceeded)
	if plan.Status.CreateTime == nil || plan.Status.FinishTime == nil {
		t.Errorf("plan status %+v, want create and finish times", plan.Status)
	}
	pods = e.waitPods(ctx, t, ns, "ar", "ar-edljob-worker-0", "ar-edljob-worker-1", "ar-edljob-worker-2", "ar-edljob-worker-3")
	w3 := pods["ar-edljob-worker-3"]
	if got := w3.Spec.Containers[0].Resources; got.Requests.Cpu().String() != "500m" || got.Limits.Cpu().String() != "500m" {
		t.Errorf("worker-3 resources %+v, want the plan's", got)
	}
	if got := envValue(t, w3, "RDZV_ENDPOINT"); got != "10.0.0.9" {
		t.Errorf("worker-3 RDZV_ENDPOINT %q, want worker-0's IP", got)
	}
	if got := envValue(t, w3, "WORKER_NUM"); got != "4" {
		t.Errorf("worker-3 WORKER_NUM %q, want 4", got)
	}
	j := e.job(ctx, t, ns, "ar")
	if j.Status.ScalePlan != "ar-scaleplan-0" {
		t.Errorf("status.scalePlan %q", j.Status.ScalePlan)
	}
	if c := findCondition(j, elasticv1alpha1.JobScaling); c == nil || c.Reason != "JobScaling" ||
		c.Message != "ElasticJob ar is scaling by ar-scaleplan-0 with status Scaling." {
		t.Errorf("Scaling condition %+v", c)
	}

	// A user's plan scales down: the highest ranks go first.
	testutil.MustCreate(ctx, t, e.c, newPlan(ns, "ar-manual", "ar", "manual", elasticv1alpha1.ScaleSpec{
		ReplicaResourceSpecs: map[elasticv1alpha1.ReplicaType]elasticv1alpha1.ReplicaResourceSpec{"worker": {Replicas: 1}},
	}))
	e.waitPlan(ctx, t, ns, "ar-manual", elasticv1alpha1.JobSucceeded)
	e.waitPods(ctx, t, ns, "ar", "ar-edljob-worker-0")

	// createPods and removePods by identity.
	testutil.MustCreate(ctx, t, e.c, newPlan(ns, "ar-pods", "ar", "auto", elasticv1alpha1.ScaleSpec{
		CreatePods: []elasticv1alpha1.PodMeta{{Name: "ar-edljob-worker-7", ID: 7, Type: "worker", RankIndex: 1, Service: "ar-edljob-worker-1:3333"}},
		RemovePods: []elasticv1alpha1.PodMeta{{Name: "ar-edljob-worker-0", Type: "worker"}},
	}))
	e.waitPlan(ctx, t, ns, "ar-pods", elasticv1alpha1.JobSucceeded)
	pods = e.waitPods(ctx, t, ns, "ar", "ar-edljob-worker-7")
	// Rank 1 had no pod left (the scale-down removed worker-1): no relaunch.
	if got := pods["ar-edljob-worker-7"].Labels; got["elasticjob.dlrover/rank-index"] != "1" || got["elasticjob.dlrover/replica-index"] != "7" ||
		got["restart-count"] != "0" {
		t.Errorf("worker-7 labels %v, want rank 1, id 7, restart-count 0", got)
	}

	// createPods for a rank that has a pod (worker-7) is a relaunch of it,
	// as DLRover's master makes one: restart-count one higher.
	testutil.MustCreate(ctx, t, e.c, newPlan(ns, "ar-relaunch", "ar", "auto", elasticv1alpha1.ScaleSpec{
		CreatePods: []elasticv1alpha1.PodMeta{{Name: "ar-edljob-worker-8", ID: 8, Type: "worker", RankIndex: 1, Service: "ar-edljob-worker-1:3333"}},
		RemovePods: []elasticv1alpha1.PodMeta{{Name: "ar-edljob-worker-7", Type: "worker"}},
	}))
	e.waitPlan(ctx, t, ns, "ar-relaunch", elasticv1alpha1.JobSucceeded)
	pods = e.waitPods(ctx, t, ns, "ar", "ar-edljob-worker-8")
	if got := pods["ar-edljob-worker-8"].Labels; got["elasticjob.dlrover/rank-index"] != "1" || got["restart-count"] != "1" {
		t.Errorf("worker-8 labels %v, want rank 1 and restart-count 1 (a relaunch of worker-7)", got)
	}
}

// findCondition returns condition typ of the job, or nil.
func findCondition(j *elasticv1alpha1.ElasticJob, typ elasticv1alpha1.JobConditionType) *elasticv1alpha1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == typ {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

// testFaultRelaunch: a failed worker is relaunched as a new pod of the same
// rank with restart-count one higher, up to restartCount; then the job,
// which has no master, fails.
func (e *env) testFaultRelaunch(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	testutil.MustCreate(ctx, t, e.c, newJob(ns, "f", elasticv1alpha1.ParameterServerStrategy, map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{
		"ps": replica(1, 0), "worker": replica(2, 2),
	}))
	e.waitPods(ctx, t, ns, "f", "f-edljob-ps-0", "f-edljob-worker-0", "f-edljob-worker-1")
	for _, p := range []string{"f-edljob-ps-0", "f-edljob-worker-0", "f-edljob-worker-1"} {
		e.setPod(ctx, t, ns, p, corev1.PodRunning, "")
	}
	e.waitPhase(ctx, t, ns, "f", elasticv1alpha1.JobRunning)

	failed := "f-edljob-worker-1"
	for restart, next := range []string{"f-edljob-worker-2", "f-edljob-worker-3"} {
		e.setPod(ctx, t, ns, failed, corev1.PodFailed, "")
		pods := e.waitPods(ctx, t, ns, "f", append([]string{"f-edljob-ps-0", "f-edljob-worker-0", "f-edljob-worker-1", next},
			map[int][]string{1: {"f-edljob-worker-2"}}[restart]...)...)
		p := pods[next]
		want := map[string]string{"restart-count": fmt.Sprint(restart + 1), "elasticjob.dlrover/rank-index": "1",
			"elasticjob.dlrover/replica-index": next[len(next)-1:]}
		for k, v := range want {
			if p.Labels[k] != v {
				t.Errorf("%s label %s=%q, want %q", next, k, p.Labels[k], v)
			}
		}
		var tf struct {
			Task elasticjob.TaskSpec `json:"task"`
		}
		if err := json.Unmarshal([]byte(envValue(t, p, "TF_CONFIG")), &tf); err != nil || tf.Task.Index != 1 {
			t.Errorf("%s TF_CONFIG task %+v (%v), want index 1", next, tf.Task, err)
		}
		if phase := e.job(ctx, t, ns, "f").Status.Phase; phase != elasticv1alpha1.JobRunning {
			t.Errorf("job phase %s after a relaunch, want Running", phase)
		}
		e.setPod(ctx, t, ns, next, corev1.PodRunning, "")
		failed = next
	}
	// restart-count 2 is the limit: the third failure fails the job, and
	// its running pods are stopped.
	e.setPod(ctx, t, ns, failed, corev1.PodFailed, "")
	j := e.waitPhase(ctx, t, ns, "f", elasticv1alpha1.JobFailed)
	if c := findCondition(j, elasticv1alpha1.JobFailed); c == nil || !strings.Contains(c.Message, "f-edljob-worker-3") {
		t.Errorf("Failed condition %+v, want it to name the pod", c)
	}
	if j.Status.CompletionTime == nil {
		t.Error("no completion time")
	}
	e.waitPods(ctx, t, ns, "f", "f-edljob-worker-1", "f-edljob-worker-2", "f-edljob-worker-3")
	if s := j.Status.ReplicaStatuses["worker"]; s == nil || s.Failed != 3 {
		t.Errorf("worker status %+v, want 3 failed", s)
	}
}

// testEvicted: an evicted pod is relaunched with its resources.
func (e *env) testEvicted(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	spec := replica(1, 0)
	spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
	testutil.MustCreate(ctx, t, e.c, newJob(ns, "ev", "", map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{"worker": spec}))
	e.waitPods(ctx, t, ns, "ev", "ev-edljob-worker-0")
	e.setPod(ctx, t, ns, "ev-edljob-worker-0", corev1.PodFailed, "Evicted")
	pods := e.waitPods(ctx, t, ns, "ev", "ev-edljob-worker-0", "ev-edljob-worker-1")
	p := pods["ev-edljob-worker-1"]
	if p.Labels["restart-count"] != "1" || p.Spec.Containers[0].Resources.Limits.Memory().String() != "1Gi" {
		t.Errorf("relaunched pod labels %v resources %+v", p.Labels, p.Spec.Containers[0].Resources)
	}
	if got := podEnv(p); slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "TF_CONFIG") || strings.HasPrefix(s, "RDZV") }) {
		t.Errorf("env %v: no strategy, no TF_CONFIG or RDZV_ENDPOINT", got)
	}
}

// testWorkersDecide: without a master, the job runs when a pod runs and
// succeeds when every worker rank has; the parameter servers still running
// are then deleted and the succeeded pods kept.
func (e *env) testWorkersDecide(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	testutil.MustCreate(ctx, t, e.c, newJob(ns, "w", elasticv1alpha1.ParameterServerStrategy, map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{
		"ps": replica(1, 0), "worker": replica(2, 0),
	}))
	e.waitPods(ctx, t, ns, "w", "w-edljob-ps-0", "w-edljob-worker-0", "w-edljob-worker-1")
	e.waitPhase(ctx, t, ns, "w", elasticv1alpha1.JobPending)
	e.setPod(ctx, t, ns, "w-edljob-ps-0", corev1.PodRunning, "")
	e.waitPhase(ctx, t, ns, "w", elasticv1alpha1.JobRunning)
	e.setPod(ctx, t, ns, "w-edljob-worker-0", corev1.PodSucceeded, "")
	testutil.Poll(ctx, t, "one worker counted succeeded", func() (bool, string, error) {
		s := e.job(ctx, t, ns, "w").Status.ReplicaStatuses["worker"]
		return s != nil && s.Succeeded == 1, fmt.Sprintf("%+v", s), nil
	})
	if phase := e.job(ctx, t, ns, "w").Status.Phase; phase != elasticv1alpha1.JobRunning {
		t.Fatalf("phase %s with one worker left, want Running", phase)
	}
	e.setPod(ctx, t, ns, "w-edljob-worker-1", corev1.PodSucceeded, "")
	j := e.waitPhase(ctx, t, ns, "w", elasticv1alpha1.JobSucceeded)
	if c := findCondition(j, elasticv1alpha1.JobRunning); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("Running condition %+v, want False", c)
	}
	e.waitPods(ctx, t, ns, "w", "w-edljob-worker-0", "w-edljob-worker-1")
}

// testMasterDecides: a job with a dlrover-master spec gets the master pod
// and Service from it, its pods get DLROVER_MASTER_ADDR, and the master's
// phase is the job's.
func (e *env) testMasterDecides(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	master := replica(0, 0)
	master.Template.Spec.Containers[0].Image = "my/dlrover-master:v1"
	job := newJob(ns, "m", elasticv1alpha1.AllreduceStrategy, map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{
		"worker": replica(1, 0), "dlrover-master": master,
	})
	job.Spec.OptimizeMode = "cluster"
	testutil.MustCreate(ctx, t, e.c, job)
	pods := e.waitPods(ctx, t, ns, "m", "elasticjob-m-dlrover-master", "m-edljob-worker-0")
	mp := pods["elasticjob-m-dlrover-master"]
	if mp.Spec.Containers[0].Image != "my/dlrover-master:v1" || mp.Labels["elasticjob.dlrover/replica-type"] != "dlrover-master" ||
		mp.Labels["elasticjob.dlrover/replica-index"] != "0" {
		t.Errorf("master pod image %s labels %v", mp.Spec.Containers[0].Image, mp.Labels)
	}
	if diff := cmp.Diff([]string{"POD_IP=<status.podIP>", "DLROVER_BRAIN_SERVICE_ADDR=dlrover-brain.dlrover.svc.cluster.local:50001"}, podEnv(mp)); diff != "" {
		t.Errorf("master env (-want +got):\n%s", diff)
	}
	if got := podEnv(pods["m-edljob-worker-0"]); len(got) == 0 || got[0] != "DLROVER_MASTER_ADDR=elasticjob-m-dlrover-master:50001" {
		t.Errorf("worker env %v, want DLROVER_MASTER_ADDR first", got)
	}
	svc := &corev1.Service{}
	testutil.Poll(ctx, t, "master Service", func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "elasticjob-m-dlrover-master"}, svc)
		return err == nil, fmt.Sprint(err), client.IgnoreNotFound(err)
	})
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 50001 || svc.Spec.Selector["elasticjob.dlrover/replica-type"] != "dlrover-master" {
		t.Errorf("master Service %+v", svc.Spec)
	}
	// The worker succeeding does not end a job with a master.
	e.setPod(ctx, t, ns, "m-edljob-worker-0", corev1.PodSucceeded, "")
	e.setPod(ctx, t, ns, "elasticjob-m-dlrover-master", corev1.PodRunning, "")
	e.waitPhase(ctx, t, ns, "m", elasticv1alpha1.JobRunning)
	// A deleted master comes back.
	if err := e.c.Delete(ctx, mp, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(ctx, t, "master recreated", func() (bool, string, error) {
		p := e.pods(ctx, t, ns, "m")["elasticjob-m-dlrover-master"]
		return p != nil && p.UID != mp.UID, "", nil
	})
	e.setPod(ctx, t, ns, "elasticjob-m-dlrover-master", corev1.PodFailed, "OOMKilled")
	j := e.waitPhase(ctx, t, ns, "m", elasticv1alpha1.JobFailed)
	if c := findCondition(j, elasticv1alpha1.JobFailed); c.Reason != "OOMKilled" || c.Message != "job("+ns+"/m) has failed" {
		t.Errorf("Failed condition %+v", c)
	}
}
