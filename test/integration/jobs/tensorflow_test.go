package jobs

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/tensorboard"
	"github.com/accelstack/accelstack/test/testutil"
)

// testTensorFlow: TF_CONFIG as the Kubeflow operator writes it, dense or
// sparse; the chief decides; the TensorBoard named after the job is created
// and reported.
func testTensorFlow(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	job := tfJob(ns, "tf", tfReplicas("chief", 1), tfReplicas("worker", 2), tfReplicas("ps", 1), tfReplicas("evaluator", 1))
	job.Spec.TensorboardSpec = &tensorstackv1beta1.TensorBoardSpec{Image: "tensorflow/tensorflow:2.14.0",
		LogDir: &tensorstackv1beta1.TensorBoardDataSource{PVC: []tensorstackv1beta1.PVCDataSource{{Name: "logs", SubPath: []string{"./log"}}}}}
	sparse := tfJob(ns, "dyn", tfReplicas("worker", 2), tfReplicas("ps", 2))
	sparse.Spec.EnableDynamicWorker = true
	for _, j := range []client.Object{job, sparse} {
		if err := e.c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	pods := e.waitPods(ctx, t, ns, "tf", "tf-chief-0", "tf-worker-0", "tf-worker-1", "tf-ps-0", "tf-evaluator-0")
	addr := func(n string) string { return fmt.Sprintf("%s.%s.svc:2222", n, ns) }
	want := fmt.Sprintf(`{"cluster":{"chief":[%q],"evaluator":[%q],"ps":[%q],"worker":[%q,%q]},"task":{"type":"worker","index":1},"environment":"cloud"}`,
		addr("tf-chief-0"), addr("tf-evaluator-0"), addr("tf-ps-0"), addr("tf-worker-0"), addr("tf-worker-1"))
	if got := envOf(pods["tf-worker-1"].Spec.Containers[0])["TF_CONFIG"]; got != want {
		t.Errorf("TF_CONFIG\n got %s\nwant %s", got, want)
	}
	dyn := e.waitPods(ctx, t, ns, "dyn", "dyn-worker-0", "dyn-worker-1", "dyn-ps-0", "dyn-ps-1")
	for name, want := range map[string]string{
		"dyn-worker-1": fmt.Sprintf(`{"cluster":{"worker":{"1":%q},"ps":[%q,%q]},"task":{"type":"worker","index":1}}`, addr("dyn-worker-1"), addr("dyn-ps-0"), addr("dyn-ps-1")),
		"dyn-ps-1":     fmt.Sprintf(`{"cluster":{"worker":{},"ps":[%q]},"task":{"type":"ps","index":1}}`, addr("dyn-ps-1")),
	} {
		if got := envOf(dyn[name].Spec.Containers[0])["TF_CONFIG"]; got != want {
			t.Errorf("%s sparse TF_CONFIG\n got %s\nwant %s", name, got, want)
		}
	}

	tb := &tensorstackv1beta1.TensorBoard{}
	testutil.Poll(ctx, t, "TensorBoard", func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tf"}, tb)
		return err == nil, fmt.Sprint(err), client.IgnoreNotFound(err)
	})
	if !cmp.Equal(tb.Spec, *job.Spec.TensorboardSpec) {
		t.Errorf("TensorBoard spec %+v", tb.Spec)
	}
	// The TensorBoard controller runs it as a Deployment, whose pod the
	// kube-controller-manager creates; the test plays its kubelet.
	var tbPods corev1.PodList
	testutil.Poll(ctx, t, "the TensorBoard's pod", func() (bool, string, error) {
		err := e.c.List(ctx, &tbPods, client.InNamespace(ns), client.HasLabels{tensorboard.LabelKey})
		return err == nil && len(tbPods.Items) > 0, fmt.Sprint(err), nil
	})
	e.setPod(ctx, t, &tbPods.Items[0], corev1.PodRunning, nil)
	testutil.Poll(ctx, t, "status.tensorboard ready", func() (bool, string, error) {
		e.get(ctx, t, job)
		st := job.Status.Tensorboard
		return st != nil && st.Ready, fmt.Sprintf("%+v", st), nil
	})
	wantStatus := batchv1beta1.DependentStatus{Action: "NOP", Note: "TensorBoard [tf] is ready", Ready: true, Reason: "DependentReady", Type: "Normal",
		Dependent: &batchv1beta1.DependentReference{APIVersion: "tensorstack.dev/v1beta1", Kind: "TensorBoard", Name: "tf", Namespace: ns, UID: tb.UID}}
	if diff := cmp.Diff(wantStatus, *job.Status.Tensorboard); diff != "" {
		t.Errorf("status.tensorboard (-want +got):\n%s", diff)
	}

	e.runAll(ctx, t, ns, "tf")
	e.setPod(ctx, t, pods["tf-worker-0"], corev1.PodSucceeded, nil)
	e.waitPhase(ctx, t, job, batchv1beta1.JobRunning)
	e.setPod(ctx, t, pods["tf-chief-0"], corev1.PodSucceeded, nil)
	e.waitPhase(ctx, t, job, batchv1beta1.JobSucceeded)
}

// testXGBoost: the master's address and the workers' in every replica; the
// master decides.
func testXGBoost(t *testing.T, e *env) {
	ctx := testutil.SubtestContext(t)
	ns := e.namespace(t, nil)
	c := container("xgboost", "python3", "/mnt/main.py")
	c.Ports = []corev1.ContainerPort{{Name: "xgboostjob-port", ContainerPort: 9991}}
	xj := &batchv1beta1.XGBoostTrainingJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "iris"},
		Spec: batchv1beta1.XGBoostTrainingJobSpec{ReplicaSpecs: []batchv1beta1.XGBoostReplicaSpec{
			{Type: "worker", Replicas: ptr.To[int32](2), Template: template(c)},
			{Type: "master", Replicas: ptr.To[int32](1), Template: template(c)},
		}},
	}
	if err := e.c.Create(ctx, xj); err != nil {
		t.Fatal(err)
	}
	pods := e.waitPods(ctx, t, ns, "iris", "iris-master-0", "iris-worker-0", "iris-worker-1")
	for name, rank := range map[string]string{"iris-master-0": "0", "iris-worker-0": "1", "iris-worker-1": "2"} {
		want := map[string]string{"MASTER_PORT": "9991", "MASTER_ADDR": "iris-master-0", "WORLD_SIZE": "3", "RANK": rank,
			"PYTHONUNBUFFERED": "1", "WORKER_PORT": "9991", "WORKER_ADDRS": "iris-worker-0,iris-worker-1"}
		if diff := cmp.Diff(want, envOf(pods[name].Spec.Containers[0])); diff != "" {
			t.Errorf("%s env (-want +got):\n%s", name, diff)
		}
	}
	e.runAll(ctx, t, ns, "iris")
	e.setPod(ctx, t, pods["iris-master-0"], corev1.PodSucceeded, nil)
	e.waitPhase(ctx, t, xj, batchv1beta1.JobSucceeded)
}
