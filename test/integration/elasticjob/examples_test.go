package elasticjob

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
	"github.com/accelstack/accelstack/pkg/elasticjob"
	"github.com/accelstack/accelstack/test/testutil"
)

// apply creates the manifest of testdata/file as kubectl would, in
// namespace ns when it names none.
func (e *env) apply(t *testing.T, file, ns string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if u.GetNamespace() == "" {
		u.SetNamespace(ns)
	}
	if err := e.c.Create(testutil.SubtestContext(t), u); err != nil {
		t.Fatalf("applying %s: %v", file, err)
	}
	return u
}

// testExamples: DLRover's example jobs and ScalePlans apply unchanged and
// run: the manual-scale job and its plan, the samples, the auto-scale jobs
// with a master of their own image, and the PyTorch jobs.
func (e *env) testExamples(t *testing.T) {
	ctx := testutil.SubtestContext(t)
	if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dlrover"}}); err != nil {
		t.Fatal(err)
	}
	ns := e.namespace(t)

	t.Run("criteo manual scale", func(t *testing.T) {
		e.apply(t, "tensorflow_criteo_deeprec_manual_job.yaml", "")
		pods := e.waitPods(ctx, t, "dlrover", "deepctr-manual-scale", "elasticjob-deepctr-manual-scale-dlrover-master",
			"deepctr-manual-scale-edljob-ps-0", "deepctr-manual-scale-edljob-worker-0", "deepctr-manual-scale-edljob-worker-1")
		// The master template names no image: DLRover's master runs.
		m := pods["elasticjob-deepctr-manual-scale-dlrover-master"].Spec.Containers[0]
		if m.Image != elasticjob.DefaultMasterImage || len(m.Command) != 3 ||
			!strings.HasPrefix(m.Command[2], "python -m dlrover.python.master.main --platform pyk8s --namespace dlrover --job_name deepctr-manual-scale --port 50001") {
			t.Errorf("master container %s %v", m.Image, m.Command)
		}
		j := e.job(ctx, t, "dlrover", "deepctr-manual-scale")
		if s := j.Spec.ReplicaSpecs["ps"]; s.AutoScale || s.Replicas != 1 {
			t.Errorf("ps spec autoScale %t replicas %d", s.AutoScale, s.Replicas)
		}
		// kubectl apply -n dlrover of the example plan.
		e.apply(t, "tensorflow_criteo_deeprec_scale_plan.yaml", "dlrover")
		e.waitPlan(ctx, t, "dlrover", "deepctr-manual-scale-plan-0", elasticv1alpha1.JobSucceeded)
		e.waitPods(ctx, t, "dlrover", "deepctr-manual-scale", "elasticjob-deepctr-manual-scale-dlrover-master",
			"deepctr-manual-scale-edljob-ps-0", "deepctr-manual-scale-edljob-worker-0", "deepctr-manual-scale-edljob-worker-1")
	})

	t.Run("samples", func(t *testing.T) {
		e.apply(t, "samples_elastic_v1alpha1_elasticjob.yaml", ns)
		e.waitPhase(ctx, t, ns, "elasticjob-sample", elasticv1alpha1.JobPending)
		// The sample plan names its job only by the legacy label.
		e.apply(t, "samples_elastic_v1alpha1_scaleplan.yaml", ns)
		e.waitPlan(ctx, t, ns, "scaleplan-sample", elasticv1alpha1.JobSucceeded)
		pods := e.waitPods(ctx, t, ns, "elasticjob-sample",
			"elasticjob-sample-edljob-ps-0", "elasticjob-sample-edljob-worker-0", "elasticjob-sample-edljob-worker-1")
		for _, p := range pods {
			if r := p.Spec.Containers[0].Resources; r.Requests.Cpu().String() != "500m" || r.Limits.Memory().String() != "256Mi" {
				t.Errorf("%s resources %+v, want the plan's", p.Name, r)
			}
		}
		if got := envValue(t, pods["elasticjob-sample-edljob-ps-0"], "TF_CONFIG"); !strings.Contains(got,
			`"worker":["elasticjob-sample-edljob-worker-0:3333","elasticjob-sample-edljob-worker-1:3333"]`) {
			t.Errorf("ps TF_CONFIG %s, want both workers", got)
		}
	})

	t.Run("iris and criteo auto scale", func(t *testing.T) {
		e.apply(t, "tensorflow_iris_autoscale_job.yaml", "")
		e.apply(t, "tensorflow_criteo_deeprec_autoscale_job.yaml", "")
		pods := e.waitPods(ctx, t, "dlrover", "elasticjob-sample", "elasticjob-elasticjob-sample-dlrover-master")
		m := pods["elasticjob-elasticjob-sample-dlrover-master"]
		if got := m.Spec.Containers[0].Image; got != "registry.cn-hangzhou.aliyuncs.com/intell-ai/dlrover:v0.2.0" {
			t.Errorf("master image %s, want the job's", got)
		}
		if got := podEnv(m); !slices.Contains(got, "DLROVER_BRAIN_SERVICE_ADDR=dlrover-brain.dlrover.svc.cluster.local:50001") {
			t.Errorf("master env %v, want the Brain address (optimizeMode cluster)", got)
		}
		// Only the evaluator has replicas; DLRover's master scales the rest.
		e.waitPods(ctx, t, "dlrover", "deepctr-auto-scale", "elasticjob-deepctr-auto-scale-dlrover-master", "deepctr-auto-scale-edljob-evaluator-0")
		j := e.job(ctx, t, "dlrover", "elasticjob-sample")
		if s := j.Spec.ReplicaSpecs["worker"]; !s.AutoScale || s.RestartCount != 3 {
			t.Errorf("worker spec autoScale %t restartCount %d", s.AutoScale, s.RestartCount)
		}
	})

	t.Run("pytorch", func(t *testing.T) {
		e.apply(t, "pytorch_mnist_elastic_job.yaml", "")
		e.apply(t, "pytorch_llama2_elastic_job.yaml", "")
		pods := e.waitPods(ctx, t, "dlrover", "torch-mnist", "torch-mnist-edljob-worker-0", "torch-mnist-edljob-worker-1",
			"torch-mnist-edljob-worker-2", "torch-mnist-edljob-worker-3")
		if got := podEnv(pods["torch-mnist-edljob-worker-2"]); !slices.Contains(got, "RDZV_ENDPOINT=<status.podIP>") {
			t.Errorf("env %v, want RDZV_ENDPOINT", got)
		}
		pods = e.waitPods(ctx, t, "dlrover", "fine-tuning-llama2", "fine-tuning-llama2-edljob-worker-0", "fine-tuning-llama2-edljob-worker-1")
		if got := pods["fine-tuning-llama2-edljob-worker-0"].Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]; got.String() != "1" {
			t.Errorf("GPU limit %s", got.String())
		}
	})
}
