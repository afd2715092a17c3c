package elasticjob

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

func testJob(strategy string, specs map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec) *elasticv1alpha1.ElasticJob {
	return &elasticv1alpha1.ElasticJob{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "u",
			Annotations: map[string]string{"pending_timeout": "600", lastAppliedKey: "{}"}},
		Spec: elasticv1alpha1.ElasticJobSpec{DistributionStrategy: strategy, ReplicaSpecs: specs},
	}
}

func envNames(p *corev1.Pod) []string {
	var out []string
	for _, e := range p.Spec.Containers[0].Env {
		out = append(out, e.Name)
	}
	return out
}

func TestNewTaskPodEnvOrder(t *testing.T) {
	job := testJob(elasticv1alpha1.ParameterServerStrategy, map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{
		"worker": spec(2), "dlrover-master": spec(0),
	})
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	pod, err := newTaskPod(job, taskPod{typ: "worker", id: 4, rank: 1, restarts: 2, resource: cpu}, clusterView{workerNum: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"DLROVER_MASTER_ADDR", "WORKER_TYPE", "WORKER_ID", "WORKER_RANK", "GRPC_ENABLE_FORK_SUPPORT", "POD_NAME", "WORKER_NUM", "TF_CONFIG"}
	if diff := cmp.Diff(want, envNames(pod)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if pod.Name != "j-edljob-worker-4" || pod.Labels["restart-count"] != "2" || pod.Labels["elasticjob.dlrover/rank-index"] != "1" {
		t.Errorf("pod %s labels %v", pod.Name, pod.Labels)
	}
	if _, ok := pod.Annotations[lastAppliedKey]; ok || pod.Annotations["pending_timeout"] != "600" {
		t.Errorf("annotations %v: the job's, without kubectl's copy", pod.Annotations)
	}
	if r := pod.Spec.Containers[0].Resources; !r.Requests.Cpu().Equal(resource.MustParse("2")) || !r.Limits.Cpu().Equal(resource.MustParse("2")) {
		t.Errorf("resources %+v", r)
	}
}

func TestNewTaskPodChiefFallsBackToWorker(t *testing.T) {
	job := testJob("", map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{"worker": spec(1)})
	pod, err := newTaskPod(job, taskPod{typ: "chief"}, clusterView{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.Containers[0].Image != "trainer" {
		t.Errorf("chief image %q", pod.Spec.Containers[0].Image)
	}
	if _, err := newTaskPod(job, taskPod{typ: "ps"}, clusterView{}); err == nil {
		t.Error("a ps pod without a ps spec, want an error")
	}
}

func TestNewMasterPodDefaults(t *testing.T) {
	master := spec(0)
	master.Template.Spec.Containers[0].Image = ""
	job := testJob("", map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{"worker": spec(1), "dlrover-master": master})
	pod := newMasterPod(job, "img")
	c := pod.Spec.Containers[0]
	if c.Image != "img" || !strings.HasSuffix(c.Command[2], "--port 50001 --pending_timeout 600") {
		t.Errorf("master %s %v", c.Image, c.Command)
	}
	if c.Resources.Limits.Memory().String() != "2Gi" || pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("master resources %+v restart policy %s", c.Resources, pod.Spec.RestartPolicy)
	}
	if diff := cmp.Diff([]string{"POD_IP"}, envNames(pod)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

func TestLatestByRank(t *testing.T) {
	pod := func(name, rank, restarts, id string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			elasticv1alpha1.RankIndexLabelKey: rank, elasticv1alpha1.RestartCountLabelKey: restarts, elasticv1alpha1.ReplicaIndexLabelKey: id}}}
	}
	pods := []corev1.Pod{pod("a", "0", "0", "0"), pod("b", "0", "1", "2"), pod("c", "1", "0", "1")}
	got := latestByRank(pods)
	if got[0].Name != "b" || got[1].Name != "c" || len(got) != 2 {
		t.Errorf("latest %v", got)
	}
	if restartsOfRank(pods, 0) != 2 || restartsOfRank(pods, 5) != 0 || maxID(pods) != 2 {
		t.Errorf("restartsOfRank or maxID wrong")
	}
}
