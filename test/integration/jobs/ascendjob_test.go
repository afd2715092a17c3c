package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/ascend/annotation"
	"github.com/accelstack/accelstack/pkg/ranktable"
	"github.com/accelstack/accelstack/test/testutil"
)

// npuContainer is the container ascend requesting n Ascend 910 chips.
func npuContainer(n int64) corev1.Container {
	c := container("ascend", "bash", "train_start.sh")
	if n > 0 {
		q := *resource.NewQuantity(n, resource.DecimalSI)
		c.Resources.Limits = corev1.ResourceList{"huawei.com/Ascend910": q}
		c.Resources.Requests = corev1.ResourceList{"huawei.com/Ascend910": q}
	}
	return c
}

func acReplica(n int32, cs ...corev1.Container) *mindxdlv1.ReplicaSpec {
	return &mindxdlv1.ReplicaSpec{Replicas: ptr.To(n), Template: template(cs...)}
}

func ascendJob(ns, name, framework string, specs map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec) *mindxdlv1.AscendJob {
	aj := &mindxdlv1.AscendJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{}}, Spec: mindxdlv1.AscendJobSpec{ReplicaSpecs: specs}}
	if framework != "" {
		aj.Labels[mindxdlv1.FrameworkLabel] = framework
	}
	return aj
}

// waitAscend waits until the last condition of the AscendJob is typ, True,
// and returns the job.
func (e *env) waitAscend(ctx context.Context, t *testing.T, aj *mindxdlv1.AscendJob, typ mindxdlv1.JobConditionType) *mindxdlv1.AscendJob {
	t.Helper()
	testutil.Poll(ctx, t, fmt.Sprintf("%s condition %s", aj.Name, typ), func() (bool, string, error) {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(aj), aj); err != nil {
			return false, "", err
		}
		cs := aj.Status.Conditions
		return len(cs) > 0 && cs[len(cs)-1].Type == typ && cs[len(cs)-1].Status == corev1.ConditionTrue,
			fmt.Sprintf("conditions %+v detail %+v", cs, aj.Status.Detail.Conditions), nil
	})
	return aj
}

// ascendEnv returns the variables of the container ascend of pod.
func ascendEnv(t *testing.T, pod *corev1.Pod) map[string]corev1.EnvVar {
	t.Helper()
	for _, c := range pod.Spec.Containers {
		if c.Name == "ascend" {
			out := map[string]corev1.EnvVar{}
			for _, v := range c.Env {
				out[v.Name] = v
			}
			return out
		}
	}
	t.Fatalf("pod %s has no container ascend", pod.Name)
	return nil
}

// checkEnv compares the named variables: a value, or "fieldRef:<path>".
func checkEnv(t *testing.T, pod *corev1.Pod, want map[string]string) {
	t.Helper()
	got := ascendEnv(t, pod)
	for name, w := range want {
		v, ok := got[name]
		var g string
		switch {
		case !ok:
			g = "<unset>"
		case v.ValueFrom != nil && v.ValueFrom.FieldRef != nil:
			g = "fieldRef:" + v.ValueFrom.FieldRef.FieldPath
		default:
			g = v.Value
		}
		if g != w {
			t.Errorf("%s: %s=%q, want %q", pod.Name, name, g, w)
		}
	}
}

// leaderIP waits for the leader's Service and checks that the status
// records its ClusterIP.
func (e *env) leaderIP(ctx context.Context, t *testing.T, aj *mindxdlv1.AscendJob, svc string) string {
	t.Helper()
	s := &corev1.Service{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: aj.Namespace, Name: svc}, s); err != nil {
		t.Fatal(err)
	}
	e.get(ctx, t, aj)
	if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone || aj.Status.Leader == nil || aj.Status.Leader.ClusterIP != s.Spec.ClusterIP {
		t.Fatalf("Service %s ClusterIP %q, status leader %+v", svc, s.Spec.ClusterIP, aj.Status.Leader)
	}
	if s.Spec.Selector["training.kubeflow.org/replica-index"] != "0" || s.Spec.Selector["job-name"] != aj.Name {
		t.Errorf("Service selector %v", s.Spec.Selector)
	}
	return s.Spec.ClusterIP
}

// testAscendJobEnv: each framework's variables in the container ascend,
// the leader's ClusterIP Service, the labels; then a PyTorch job runs and
// succeeds with Kubeflow's conditions.
func testAscendJobEnv(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	visible := "fieldRef:metadata.annotations['huawei.com/Ascend910']"

	pt := ascendJob(ns, "pt", "pytorch", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{
		"Master": acReplica(1, npuContainer(8)), "Worker": acReplica(2, npuContainer(8), container("sidecar", "sleep", "inf"))})
	ms := ascendJob(ns, "ms", "mindspore", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{
		"scheduler": acReplica(1, npuContainer(0)), "worker": acReplica(2, npuContainer(4))})
	tf := ascendJob(ns, "tf", "tensorflow", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{
		"Chief": acReplica(1, npuContainer(8)), "Worker": acReplica(1, npuContainer(8))})
	for _, j := range []*mindxdlv1.AscendJob{pt, ms, tf} {
		if err := e.c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}

	pods := e.waitPods(ctx, t, ns, "pt", "pt-master-0", "pt-worker-0", "pt-worker-1")
	ip := e.leaderIP(ctx, t, pt, "pt-master-0")
	checkEnv(t, pods["pt-master-0"], map[string]string{"MASTER_ADDR": ip, "MASTER_PORT": "2222", "RANK": "0", "WORLD_SIZE": "24",
		"LOCAL_WORLD_SIZE": "8", "LOCAL_RANK": "0,1,2,3,4,5,6,7", "REPLICA_TYPE": "Master", "ASCEND_VISIBLE_DEVICES": visible,
		"MINDX_TASK_ID": string(pt.UID), "HostNetwork": "false", "MINDX_SERVER_DOMAIN": "clusterd-grpc-svc.mindx-dl.svc.cluster.local"})
	checkEnv(t, pods["pt-worker-1"], map[string]string{"MASTER_ADDR": ip, "RANK": "2", "WORLD_SIZE": "24", "REPLICA_TYPE": "Worker"})
	for _, c := range pods["pt-worker-1"].Spec.Containers {
		if c.Name == "sidecar" && len(c.Env) != 0 {
			t.Errorf("sidecar env %v", c.Env)
		}
	}
	w1 := pods["pt-worker-1"]
	if w1.Labels["job-name"] != "pt" || w1.Labels["replica-type"] != "worker" || w1.Labels["training.kubeflow.org/replica-index"] != "1" ||
		w1.Labels["group-name"] != "mindxdl.gitee.com" || w1.Annotations["hccl/rankIndex"] != "2" {
		t.Errorf("worker labels %v annotations %v", w1.Labels, w1.Annotations)
	}
	if pods["pt-master-0"].Labels["training.kubeflow.org/job-role"] != "master" {
		t.Errorf("master labels %v", pods["pt-master-0"].Labels)
	}

	pods = e.waitPods(ctx, t, ns, "ms", "ms-scheduler-0", "ms-worker-0", "ms-worker-1")
	ip = e.leaderIP(ctx, t, ms, "ms-scheduler-0")
	checkEnv(t, pods["ms-scheduler-0"], map[string]string{"MS_SCHED_HOST": "fieldRef:status.podIP", "MS_ROLE": "MS_SCHED", "MS_NODE_RANK": "0",
		"NPU_POD": "false", "MS_WORKER_NUM": "8", "MS_SCHED_PORT": "2222", "ASCEND_VISIBLE_DEVICES": "<unset>"})
	checkEnv(t, pods["ms-worker-1"], map[string]string{"MS_SCHED_HOST": ip, "MS_ROLE": "MS_WORKER", "MS_NODE_RANK": "1", "NPU_POD": "true",
		"MS_LOCAL_WORKER": "4", "MS_WORKER_NUM": "8", "MS_SERVER_NUM": "0", "REPLICA_TYPE": "Worker"})

	pods = e.waitPods(ctx, t, ns, "tf", "tf-chief-0", "tf-worker-0")
	ip = e.leaderIP(ctx, t, tf, "tf-chief-0")
	checkEnv(t, pods["tf-chief-0"], map[string]string{"CM_CHIEF_IP": "fieldRef:status.podIP", "CM_RANK": "0", "CM_WORKER_SIZE": "16"})
	checkEnv(t, pods["tf-worker-0"], map[string]string{"CM_CHIEF_IP": ip, "CM_CHIEF_PORT": "2222", "CM_RANK": "1", "CM_LOCAL_WORKER": "8",
		"CM_CHIEF_DEVICE": "0", "CM_WORKER_IP": "fieldRef:status.podIP"})

	// The PyTorch job runs, then succeeds.
	e.waitAscend(ctx, t, pt, mindxdlv1.JobCreated)
	e.runAll(ctx, t, ns, "pt")
	e.waitAscend(ctx, t, pt, mindxdlv1.JobRunning)
	for _, p := range e.pods(ctx, t, ns, "pt") {
		e.setPod(ctx, t, p, corev1.PodSucceeded, nil)
	}
	e.waitAscend(ctx, t, pt, mindxdlv1.JobSucceeded)
	var running *mindxdlv1.JobCondition
	for i := range pt.Status.Conditions {
		if pt.Status.Conditions[i].Type == mindxdlv1.JobRunning {
			running = &pt.Status.Conditions[i]
		}
	}
	if running == nil || running.Status != corev1.ConditionFalse {
		t.Errorf("Running condition %+v after success", running)
	}
	if rs := pt.Status.ReplicaStatuses["Worker"]; rs == nil || rs.Succeeded != 2 || pt.Status.CompletionTime == nil {
		t.Errorf("replica statuses %+v completion %v", pt.Status.ReplicaStatuses, pt.Status.CompletionTime)
	}
}

// testAscendJobRestart: a worker exiting with a retryable code under
// ExitCode is recreated (Restarting), and runs again (Running); a
// permanent code fails the job.
func testAscendJobRestart(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	w := acReplica(1, npuContainer(0))
	w.RestartPolicy = mindxdlv1.RestartPolicyExitCode
	aj := ascendJob(ns, "rs", "pytorch", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{"Master": acReplica(1, npuContainer(0)), "Worker": w})
	if err := e.c.Create(ctx, aj); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "rs", "rs-master-0", "rs-worker-0")
	e.runAll(ctx, t, ns, "rs")
	e.waitAscend(ctx, t, aj, mindxdlv1.JobRunning)
	e.setPod(ctx, t, pods["rs-worker-0"], corev1.PodFailed, map[string]int32{"ascend": 137})
	// Restarting lasts until the pod is recreated; its event stays.
	e.waitEvent(ctx, t, ns, "rs", "JobRestarting", "Job "+ns+"/rs is restarting: Replica rs-worker-0")
	testutil.Poll(ctx, t, "worker recreated", func() (bool, string, error) {
		p := e.pods(ctx, t, ns, "rs")["rs-worker-0"]
		return p != nil && p.UID != pods["rs-worker-0"].UID && p.DeletionTimestamp == nil, "", nil
	})
	e.runAll(ctx, t, ns, "rs")
	e.waitAscend(ctx, t, aj, mindxdlv1.JobRunning)
	for _, c := range aj.Status.Conditions {
		if c.Type == mindxdlv1.JobRestarting {
			t.Errorf("Restarting beside Running: %+v", aj.Status.Conditions)
		}
	}
	if aj.Status.Detail.BackoffCount != 1 {
		t.Errorf("backoffCount %d", aj.Status.Detail.BackoffCount)
	}
	e.setPod(ctx, t, e.pods(ctx, t, ns, "rs")["rs-worker-0"], corev1.PodFailed, map[string]int32{"ascend": 1})
	e.waitAscend(ctx, t, aj, mindxdlv1.JobFailed)
	if c := aj.Status.Conditions[len(aj.Status.Conditions)-1]; c.Reason != "JobFailed" {
		t.Errorf("Failed condition %+v", c)
	}
}

// testAscendJobScheduler: schedulerName t9k-scheduler gets a PodGroup and
// the T9k Scheduler; volcano is set on the pods as named, with no PodGroup.
func testAscendJobScheduler(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	specs := func() map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec {
		return map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{"Master": acReplica(1, npuContainer(0)), "Worker": acReplica(2, npuContainer(0))}
	}
	t9k := ascendJob(ns, "gang", "pytorch", specs())
	t9k.Spec.SchedulerName = "t9k-scheduler"
	t9k.Spec.RunPolicy.SchedulingPolicy = &mindxdlv1.SchedulingPolicy{Queue: "default", MinAvailable: ptr.To[int32](2)}
	vc := ascendJob(ns, "vc", "pytorch", specs())
	vc.Spec.SchedulerName = "volcano"
	for _, j := range []*mindxdlv1.AscendJob{t9k, vc} {
		if err := e.c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range e.waitPods(ctx, t, ns, "gang", "gang-master-0", "gang-worker-0", "gang-worker-1") {
		if p.Spec.SchedulerName != "t9k-scheduler" || p.Labels["scheduler.tensorstack.dev/queue"] != "default" {
			t.Errorf("%s: schedulerName %q labels %v", p.Name, p.Spec.SchedulerName, p.Labels)
		}
	}
	pg := &schedulerv1beta1.PodGroup{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gang"}, pg); err != nil {
		t.Fatal(err)
	}
	if pg.Spec.MinMember != 2 || pg.Spec.Queue != "default" {
		t.Errorf("PodGroup spec %+v", pg.Spec)
	}
	for _, p := range e.waitPods(ctx, t, ns, "vc", "vc-master-0", "vc-worker-0", "vc-worker-1") {
		if p.Spec.SchedulerName != "volcano" {
			t.Errorf("%s: schedulerName %q", p.Name, p.Spec.SchedulerName)
		}
	}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "vc"}, &schedulerv1beta1.PodGroup{}); err == nil {
		t.Error("PodGroup of a job for volcano")
	}
}

// testAscendJobRankTable: a template volume named ranktable (the file-based
// launch) serves the job's rank table, which is completed in rank order
// once the device plugin has annotated every pod.
func testAscendJobRankTable(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	withVolume := func() *mindxdlv1.ReplicaSpec {
		c := npuContainer(1)
		c.VolumeMounts = []corev1.VolumeMount{{Name: "ranktable", MountPath: ranktable.MountPath}}
		r := acReplica(1, c)
		r.Template.Spec.Volumes = []corev1.Volume{{Name: "ranktable", VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: "/user/mindx-dl/ranktable/" + ns + ".rt"}}}}
		return r
	}
	aj := ascendJob(ns, "rt", "pytorch", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{"Master": withVolume(), "Worker": withVolume()})
	if err := e.c.Create(ctx, aj); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "rt", "rt-master-0", "rt-worker-0")
	for i, name := range []string{"rt-worker-0", "rt-master-0"} {
		p := pods[name]
		for _, v := range p.Spec.Volumes {
			if v.Name == "ranktable" && (v.ConfigMap == nil || v.ConfigMap.Name != "rings-config-rt") {
				t.Errorf("%s: volume ranktable %+v", name, v.VolumeSource)
			}
		}
		n := 0
		for _, m := range p.Spec.Containers[0].VolumeMounts {
			if m.MountPath == ranktable.MountPath {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d mounts at %s: %+v", name, n, ranktable.MountPath, p.Spec.Containers[0].VolumeMounts)
		}
		conf, _ := json.Marshal(annotation.PodConfiguration{PodName: name, ServerID: fmt.Sprintf("10.0.0.%d", i+1),
			Devices: []annotation.DeviceConfig{{DeviceID: "0", DeviceIP: fmt.Sprintf("192.168.0.%d", i+1)}}})
		patch := client.MergeFrom(p.DeepCopy())
		p.Annotations[annotation.ConfigurationKey] = string(conf)
		if err := e.c.Patch(ctx, p, patch); err != nil {
			t.Fatal(err)
		}
	}
	cm := &corev1.ConfigMap{}
	testutil.Poll(ctx, t, "rank table completed", func() (bool, string, error) {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rings-config-rt"}, cm); err != nil {
			return false, "", client.IgnoreNotFound(err)
		}
		st, err := ranktable.ParseStatus(cm.Data["hccl.json"])
		return st == ranktable.StatusCompleted, cm.Data["hccl.json"], err
	})
	var rt ranktable.RankTable
	if err := json.Unmarshal([]byte(cm.Data["hccl.json"]), &rt); err != nil {
		t.Fatal(err)
	}
	// The master is rank 0 (hccl/rankIndex), though annotated last.
	if len(rt.ServerList) != 2 || rt.ServerList[0].ServerID != "10.0.0.2" || rt.ServerList[1].Devices[0].RankID != "1" {
		t.Errorf("rank table %s", cm.Data["hccl.json"])
	}
}

// testAscendJobRefused: the rules of ascend-operator's validation refuse a
// job at admission, naming the field; past the webhook the job fails with
// JobValidFailed and a Warning event with the rule's reason.
func testAscendJobRefused(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	valid := func(name, fw string) *mindxdlv1.AscendJob {
		return ascendJob(ns, name, fw, map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{"Master": acReplica(1, npuContainer(8)), "Worker": acReplica(1, npuContainer(8))})
	}
	unknown := valid("unknown", "caffe")
	none := valid("none", "")
	wrongType := valid("wrongtype", "pytorch")
	wrongType.Spec.ReplicaSpecs["Scheduler"] = acReplica(1, npuContainer(0))
	twoMasters := valid("twomasters", "pytorch")
	twoMasters.Spec.ReplicaSpecs["Master"].Replicas = ptr.To[int32](2)
	noMaster := valid("nomaster", "pytorch")
	delete(noMaster.Spec.ReplicaSpecs, "Master")
	noAscend := valid("noascend", "pytorch")
	noAscend.Spec.ReplicaSpecs["Worker"] = acReplica(1, container("main", "run"))
	noImage := valid("noimage", "pytorch")
	noImage.Spec.ReplicaSpecs["Worker"].Template.Spec.Containers[0].Image = ""
	tooMany := valid("toomany", "pytorch")
	tooMany.Spec.ReplicaSpecs["Worker"].Replicas = ptr.To[int32](20001)
	success := valid("success", "pytorch")
	success.Spec.SuccessPolicy = ptr.To[mindxdlv1.SuccessPolicy]("AnyWorker")
	noQueue := valid("noqueue", "pytorch")
	noQueue.Spec.SchedulerName = "t9k-scheduler"
	lonely := ascendJob(ns, "lonely", "mindspore", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{"Worker": acReplica(2, npuContainer(8))})
	empty := ascendJob(ns, "empty", "pytorch", nil)
	dup := valid("dup", "pytorch")
	dup.Spec.ReplicaSpecs["worker"] = acReplica(1, npuContainer(8))
	for _, tc := range []struct {
		obj  *mindxdlv1.AscendJob
		want string
	}{
		{unknown, `metadata.labels[framework]: Unsupported value: "caffe"`},
		{none, `metadata.labels[framework]: Required value`},
		{wrongType, `spec.replicaSpecs[Scheduler]: Unsupported value: "Scheduler"`},
		{twoMasters, `spec.replicaSpecs[Master].replicas: Invalid value: 2: Master must have exactly 1 replica`},
		{noMaster, `spec.replicaSpecs[Master]: Required value: a pytorch job needs a Master`},
		{noAscend, `spec.replicaSpecs[Worker].template.spec.containers: Required value: a container named ascend is required`},
		{noImage, `spec.replicaSpecs[Worker].template.spec.containers[ascend].image: Required value`},
		{tooMany, `spec.replicaSpecs[Worker].replicas: Invalid value: 20001`},
		{success, `spec.successPolicy: Unsupported value: "AnyWorker"`},
		{noQueue, `spec.runPolicy.schedulingPolicy.queue: Required value`},
		{lonely, `spec.replicaSpecs[Scheduler]: Required value: a MindSpore job without a Scheduler runs on one NPU at most`},
		{empty, `spec.replicaSpecs: Required value`},
		{dup, `spec.replicaSpecs[worker]: Duplicate value`},
	} {
		err := e.c.Create(ctx, tc.obj)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.obj.Name, err, tc.want)
		}
	}

	bypass := e.namespace(t, map[string]string{bypassLabel: "true"})
	past := valid("past", "caffe")
	past.Namespace = bypass
	if err := e.c.Create(ctx, past); err != nil {
		t.Fatal(err)
	}
	e.waitAscend(ctx, t, past, mindxdlv1.JobFailed)
	c := past.Status.Conditions[len(past.Status.Conditions)-1]
	if c.Reason != "JobValidFailed" || !strings.HasPrefix(c.Message, `InvalidFramework: metadata.labels[framework]: Unsupported value: "caffe"`) {
		t.Errorf("Failed condition %+v", c)
	}
	e.waitEvent(ctx, t, bypass, "past", "InvalidFramework", "InvalidFramework: metadata.labels[framework]")
	var evs eventsv1.EventList
	if err := e.c.List(ctx, &evs, client.InNamespace(bypass)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if ev.Reason == "InvalidFramework" && ev.Type != corev1.EventTypeWarning {
			t.Errorf("event %s %s", ev.Type, ev.Reason)
		}
	}
	if pods := e.pods(ctx, t, bypass, "past"); len(pods) != 0 {
		t.Errorf("%d pods of an invalid job", len(pods))
	}
}

// testAscendJobSeed: the objects of the MindX DL integration guide apply
// unchanged, drawing no warning, and the AscendJob runs with the
// framework's variables on the scheduler it names.
func testAscendJobSeed(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	b, err := os.ReadFile("testdata/seed002-ascendjob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := &warnings{}
	cfg := rest.CopyConfig(e.cp.Config)
	cfg.WarningHandler = w
	c, err := client.New(cfg, client.Options{Scheme: e.cp.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetNamespace(ns)
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("mindx-guide"), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s: %v", u.GetKind(), err)
		}
	}
	if len(w.list) != 0 {
		t.Errorf("warnings %q", w.list)
	}
	aj := &mindxdlv1.AscendJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default-test-pytorch"}}
	pods := e.waitPods(ctx, t, ns, aj.Name, "default-test-pytorch-master-0", "default-test-pytorch-worker-0")
	ip := e.leaderIP(ctx, t, aj, "default-test-pytorch-master-0")
	checkEnv(t, pods["default-test-pytorch-worker-0"], map[string]string{"MASTER_ADDR": ip, "MASTER_PORT": "2222", "RANK": "1",
		"WORLD_SIZE": "16", "XDL_IP": "fieldRef:status.hostIP"})
	for _, p := range pods {
		if p.Spec.SchedulerName != "volcano" || p.Labels["ring-controller.atlas"] != "ascend-910b" {
			t.Errorf("%s: schedulerName %q labels %v", p.Name, p.Spec.SchedulerName, p.Labels)
		}
		mounted := false
		for _, v := range p.Spec.Volumes {
			mounted = mounted || (v.ConfigMap != nil && v.ConfigMap.Name == "rings-config-default-test-pytorch")
		}
		if !mounted {
			t.Errorf("%s does not mount the rank table: %+v", p.Name, p.Spec.Volumes)
		}
	}
	e.waitAscend(ctx, t, aj, mindxdlv1.JobCreated)
}
