package jobs

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/ascend/annotation"
	"github.com/accelstack/accelstack/pkg/ranktable"
	"github.com/accelstack/accelstack/test/testutil"
)

// testPodGroup: with spec.scheduler.t9kScheduler the job's PodGroup exists
// before any pod, sized to every replica with a role per type, and the pods
// carry the T9k Scheduler's name and labels; without it they keep the
// default scheduler.
func testPodGroup(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	gj := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "job-test"},
		Spec: batchv1beta1.GenericJobSpec{
			Scheduler: &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: "default", Priority: 10}},
			ReplicaSpecs: []batchv1beta1.ReplicaSpec{
				{Type: "ps", Template: template(container("main", "serve"))},
				{Type: "worker", Replicas: ptr.To[int32](4), Template: template(container("main", "train"))},
			},
		},
	}
	plain := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"},
		Spec:       batchv1beta1.GenericJobSpec{ReplicaSpecs: []batchv1beta1.ReplicaSpec{{Type: "worker", Template: template(container("main", "train"))}}},
	}
	// The PodGroup's first version is seen by a watch: the queue
	// controllers write its status once the pods exist.
	wc, err := client.NewWithWatch(e.cp.Config, client.Options{Scheme: e.c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	watch, err := wc.Watch(ctx, &schedulerv1beta1.PodGroupList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Stop()
	for _, j := range []*batchv1beta1.GenericJob{gj, plain} {
		if err := e.c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	pods := e.waitPods(ctx, t, ns, "job-test", "job-test-ps-0", "job-test-worker-0", "job-test-worker-1", "job-test-worker-2", "job-test-worker-3")
	var created string
	select {
	case ev := <-watch.ResultChan():
		if o, ok := ev.Object.(*schedulerv1beta1.PodGroup); ok {
			created = o.ResourceVersion
		}
	case <-ctx.Done():
	}
	pg := &schedulerv1beta1.PodGroup{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "job-test"}, pg); err != nil {
		t.Fatal(err)
	}
	want := schedulerv1beta1.PodGroupSpec{MinMember: 5, Queue: "default", Priority: 10,
		Roles: []schedulerv1beta1.Role{{Name: "ps", MinMember: 1}, {Name: "worker", MinMember: 4}}}
	if diff := cmp.Diff(want, pg.Spec); diff != "" {
		t.Errorf("PodGroup spec (-want +got):\n%s", diff)
	}
	if ref := metav1.GetControllerOf(pg); ref == nil || ref.Name != "job-test" || ref.Kind != "GenericJob" {
		t.Errorf("PodGroup owner %+v", ref)
	}
	pgRV, _ := strconv.ParseInt(created, 10, 64)
	if pgRV == 0 {
		t.Fatalf("no PodGroup creation seen (version %q)", created)
	}
	for name, p := range pods {
		if p.Spec.SchedulerName != "t9k-scheduler" {
			t.Errorf("%s schedulerName %q", name, p.Spec.SchedulerName)
		}
		for k, v := range map[string]string{
			"scheduler.tensorstack.dev/group-name": "job-test", "scheduler.tensorstack.dev/queue": "default",
			"scheduler.tensorstack.dev/role": p.Labels["batch.tensorstack.dev/replica-type"],
			"genericjob":                     "job-test", "genericjob-replica": name,
			"tensorstack.dev/component": "genericjob", "tensorstack.dev/component-type": "user",
		} {
			if p.Labels[k] != v {
				t.Errorf("%s label %s=%q, want %q", name, k, p.Labels[k], v)
			}
		}
		// Resource versions come from etcd's revision: the PodGroup was
		// written first.
		if rv, _ := strconv.ParseInt(p.ResourceVersion, 10, 64); rv < pgRV {
			t.Errorf("%s (version %d) written before the PodGroup (version %d)", name, rv, pgRV)
		}
	}
	pp := e.waitPods(ctx, t, ns, "plain", "plain-worker-0")["plain-worker-0"]
	if pp.Spec.SchedulerName != "default-scheduler" || pp.Labels["scheduler.tensorstack.dev/queue"] != "" {
		t.Errorf("plain pod: schedulerName %q labels %v", pp.Spec.SchedulerName, pp.Labels)
	}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "plain"}, &schedulerv1beta1.PodGroup{}); err == nil {
		t.Error("PodGroup of a job without the T9k Scheduler")
	}
}

// testAscend: pods requesting huawei.com/Ascend910 get the rank-table label
// and mount the job's rings-config-<job> ConfigMap, created initializing;
// the rank-table controller completes it from the pods' annotations.
func testAscend(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	c := container("ascend", "bash", "train_start.sh")
	c.Resources.Limits = corev1.ResourceList{"huawei.com/Ascend910": resource.MustParse("8")}
	c.Resources.Requests = corev1.ResourceList{"huawei.com/Ascend910": resource.MustParse("8")}
	job := pytorchJob(ns, "npu", batchv1beta1.PyTorchReplicaSpec{Type: "master", Template: template(c)}, batchv1beta1.PyTorchReplicaSpec{Type: "worker", Template: template(c)})
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "npu", "npu-master-0", "npu-worker-0")
	cm := &corev1.ConfigMap{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rings-config-npu"}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["hccl.json"] != `{"status":"initializing"}` || cm.Labels[ranktable.RingControllerLabel] == "" {
		t.Errorf("ConfigMap data %v labels %v", cm.Data, cm.Labels)
	}
	for i, name := range []string{"npu-master-0", "npu-worker-0"} {
		p := pods[name]
		if p.Labels[ranktable.RingControllerLabel] != "ascend-910" {
			t.Errorf("%s labels %v", name, p.Labels)
		}
		mounted := false
		for _, m := range p.Spec.Containers[0].VolumeMounts {
			mounted = mounted || m.MountPath == "/user/serverid/devindex/config"
		}
		var src *corev1.ConfigMapVolumeSource
		for _, v := range p.Spec.Volumes {
			if v.ConfigMap != nil {
				src = v.ConfigMap
			}
		}
		if !mounted || src == nil || src.Name != "rings-config-npu" {
			t.Errorf("%s does not mount the rank table: %+v %+v", name, p.Spec.Containers[0].VolumeMounts, p.Spec.Volumes)
		}
		// What the device plugin writes once it has allocated chips.
		conf, _ := json.Marshal(annotation.PodConfiguration{PodName: name, ServerID: fmt.Sprintf("10.0.0.%d", i+1),
			Devices: []annotation.DeviceConfig{{DeviceID: "0", DeviceIP: fmt.Sprintf("192.168.0.%d", i+1)}}})
		patch := client.MergeFrom(p.DeepCopy())
		p.Annotations = map[string]string{annotation.ConfigurationKey: string(conf)}
		if err := e.c.Patch(ctx, p, patch); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Poll(ctx, t, "rank table completed", func() (bool, string, error) {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
			return false, "", err
		}
		st, err := ranktable.ParseStatus(cm.Data["hccl.json"])
		return st == ranktable.StatusCompleted, cm.Data["hccl.json"], err
	})
}

// testPodNameTaken: a replica's pod name held by another object is never
// doubled: the job waits, says so, and creates its pod once the name is
// free.
func testPodNameTaken(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken-worker-0", Labels: map[string]string{"batch.tensorstack.dev/job-name": "taken"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{container("main", "sleep", "1")}}}
	if err := e.c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	job := pytorchJob(ns, "taken", pytorchReplicas("worker", 1, batchv1beta1.ReplicaRestartOnFailure))
	if err := e.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	e.waitEvent(ctx, t, ns, "taken", "PodNameTaken", "Pod taken-worker-0 belongs to another object")
	if p := e.pods(ctx, t, ns, "taken")["taken-worker-0"]; p == nil || p.UID != other.UID {
		t.Fatalf("pod taken-worker-0 replaced: %+v", p)
	}
	if err := e.c.Delete(ctx, other); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(ctx, t, "the job's own pod", func() (bool, string, error) {
		p := e.pods(ctx, t, ns, "taken")["taken-worker-0"]
		return p != nil && metav1.IsControlledBy(p, job), "", nil
	})
}
