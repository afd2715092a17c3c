package ascendjob

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	mindxdlv1 "github.com/accelstack/accelstack/api/mindxdl/v1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

func replica(n int32, res string, chips int64) *mindxdlv1.ReplicaSpec {
	c := corev1.Container{Name: Container, Image: "img"}
	if chips > 0 {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceName(res): *resource.NewQuantity(chips, resource.DecimalSI)}
	}
	return &mindxdlv1.ReplicaSpec{Replicas: ptr.To(n), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}}
}

func job(fw string, specs map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec) *mindxdlv1.AscendJob {
	return &mindxdlv1.AscendJob{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", Labels: map[string]string{mindxdlv1.FrameworkLabel: fw}},
		Spec: mindxdlv1.AscendJobSpec{ReplicaSpecs: specs}}
}

func envMap(vars []corev1.EnvVar) map[string]string {
	out := map[string]string{}
	for _, v := range vars {
		if v.ValueFrom != nil {
			out[v.Name] = "ref:" + v.ValueFrom.FieldRef.FieldPath
		} else {
			out[v.Name] = v.Value
		}
	}
	return out
}

func TestTopologyAndFrameworkEnv(t *testing.T) {
	for _, tc := range []struct {
		name  string
		job   *mindxdlv1.AscendJob
		typ   mindxdlv1.ReplicaType
		index int32
		want  map[string]string
	}{
		{"pytorch worker after an NPU master", job("pytorch", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{
			"Master": replica(1, "huawei.com/Ascend910", 8), "Worker": replica(3, "huawei.com/Ascend910", 8)}),
			"Worker", 2, map[string]string{"RANK": "3", "WORLD_SIZE": "32", "LOCAL_WORLD_SIZE": "8", "MASTER_ADDR": "1.2.3.4", "MASTER_PORT": "2222"}},
		{"pytorch worker after a CPU master", job("pytorch", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{
			"master": replica(1, "", 0), "worker": replica(2, "huawei.com/Ascend910", 2)}),
			"Worker", 1, map[string]string{"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "0,1"}},
		{"pytorch dynamic vNPU", job("pytorch", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{
			"Master": replica(1, "", 0), "Worker": replica(2, "huawei.com/npu-core", 4)}),
			"Worker", 0, map[string]string{"RANK": "0", "WORLD_SIZE": "", "LOCAL_RANK": ""}},
		{"mindspore scheduler", job("mindspore", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{
			"Scheduler": replica(1, "", 0), "Worker": replica(2, "huawei.com/Ascend910", 8)}),
			"Scheduler", 0, map[string]string{"MS_SCHED_HOST": "ref:status.podIP", "MS_ROLE": "MS_SCHED", "NPU_POD": "false", "MS_WORKER_NUM": "16"}},
		{"mindspore without scheduler", job("mindspore", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{
			"Worker": replica(1, "huawei.com/Ascend910", 1)}),
			"Worker", 0, map[string]string{"MS_SCHED_HOST": "", "MS_ROLE": ""}},
		{"tensorflow worker", job("tensorflow", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{
			"Chief": replica(1, "huawei.com/Ascend910", 8), "Worker": replica(1, "huawei.com/Ascend910", 8)}),
			"Worker", 0, map[string]string{"CM_CHIEF_IP": "1.2.3.4", "CM_RANK": "1", "CM_WORKER_SIZE": "16", "CM_WORKER_IP": "ref:status.podIP"}},
		{"no NPU at all", job("pytorch", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{
			"Master": replica(1, "", 0), "Worker": replica(1, "", 0)}),
			"Worker", 0, map[string]string{"RANK": "", "MASTER_ADDR": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := topologyOf(tc.job)
			got := envMap(topo.frameworkEnv(tc.typ, topo.rank(tc.typ, tc.index), "1.2.3.4", 2222))
			for k, w := range tc.want {
				if got[k] != w {
					t.Errorf("%s = %q, want %q (all: %v)", k, got[k], w, got)
				}
			}
		})
	}
}

func TestLogicSuperPod(t *testing.T) {
	for _, tc := range []struct{ rank, spBlock, chips, want int }{
		{5, 0, 8, 0}, {5, 16, 8, 2}, {1, 16, 8, 0}, {3, 4, 8, 3}, {7, 32, 8, 1},
	} {
		if got := logicSuperPod(tc.rank, tc.spBlock, tc.chips); got != tc.want {
			t.Errorf("logicSuperPod(%d, %d, %d) = %d, want %d", tc.rank, tc.spBlock, tc.chips, got, tc.want)
		}
	}
}

func TestCheckReasons(t *testing.T) {
	ok := func() *mindxdlv1.AscendJob {
		return job("pytorch", map[mindxdlv1.ReplicaType]*mindxdlv1.ReplicaSpec{"Master": replica(1, "", 0), "Worker": replica(2, "huawei.com/Ascend910", 8)})
	}
	if ps := check(ok()); len(ps) != 0 {
		t.Fatalf("valid job: %v", ps[0].err)
	}
	nilSpec := ok()
	nilSpec.Spec.ReplicaSpecs["Worker"] = nil
	badRestart := ok()
	badRestart.Spec.ReplicaSpecs["Worker"].RestartPolicy = "Sometimes"
	tooMany := ok()
	tooMany.Spec.ReplicaSpecs["Worker"].Replicas = ptr.To[int32](jobs.MaxJobPods)
	for _, tc := range []struct {
		name   string
		job    *mindxdlv1.AscendJob
		reason string
		field  string
	}{
		{"framework", job("caffe", ok().Spec.ReplicaSpecs), ReasonInvalidFramework, "metadata.labels[framework]"},
		{"nil spec", nilSpec, ReasonInvalidReplicaSpec, "spec.replicaSpecs[Worker]"},
		{"restart policy", badRestart, ReasonInvalidReplicaSpec, "spec.replicaSpecs[Worker].restartPolicy"},
		{"tensorflow master", job("tensorflow", ok().Spec.ReplicaSpecs), ReasonInvalidReplicaType, "spec.replicaSpecs[Master]"},
		{"too many pods in all", tooMany, ReasonInvalidReplicaSpec, "spec.replicaSpecs[*].replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := check(tc.job)
			if len(ps) == 0 || ps[0].reason != tc.reason || ps[0].err.Field != tc.field {
				t.Errorf("got %+v, want %s at %s", ps, tc.reason, tc.field)
			}
		})
	}
}

func TestSetConditionLikeKubeflow(t *testing.T) {
	now := metav1.Now()
	var cs []mindxdlv1.JobCondition
	for _, step := range []struct {
		typ     mindxdlv1.JobConditionType
		changed bool
		want    string
	}{
		{mindxdlv1.JobCreated, true, "Created=True"},
		{mindxdlv1.JobCreated, false, "Created=True"},
		{mindxdlv1.JobRunning, true, "Created=True Running=True"},
		{mindxdlv1.JobRestarting, true, "Created=True Restarting=True"},
		{mindxdlv1.JobRunning, true, "Created=True Running=True"},
		{mindxdlv1.JobSucceeded, true, "Created=True Running=False Succeeded=True"},
	} {
		_, changed := setCondition(&cs, step.typ, "R"+string(step.typ), "m", now)
		var got []string
		for _, c := range cs {
			got = append(got, string(c.Type)+"="+string(c.Status))
		}
		if changed != step.changed || strings.Join(got, " ") != step.want {
			t.Errorf("set %s: changed %v, conditions %v; want %v, %s", step.typ, changed, got, step.changed, step.want)
		}
	}
}

func TestSyncConditionsFromDetail(t *testing.T) {
	aj := job("caffe", nil)
	d := &aj.Status.Detail.JobStatus
	d.Conditions = []batchv1beta1.JobCondition{{Type: batchv1beta1.JobFailedCond, Status: corev1.ConditionTrue, Reason: "InvalidSpec", Message: "x"}}
	set := syncConditions(aj, metav1.Now())
	if len(set) != 2 || set[1].Type != mindxdlv1.JobFailed || set[1].Reason != ReasonJobValidFail ||
		!strings.HasPrefix(set[1].Message, "InvalidFramework: metadata.labels[framework]") {
		t.Errorf("conditions set %+v", set)
	}
	if again := syncConditions(aj, metav1.Now()); len(again) != 0 {
		t.Errorf("set again: %+v", again)
	}
}
