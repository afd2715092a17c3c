package elasticjob

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

// TestWorkersNeverDecideAJobWithAMaster: while a job's master pod is
// missing (deleted, its replacement not yet listed), its succeeded workers
// do not finish the job; the phase waits for the master.
func TestWorkersNeverDecideAJobWithAMaster(t *testing.T) {
	job := testJob(elasticv1alpha1.AllreduceStrategy, map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{
		"worker": spec(1), "dlrover-master": spec(0),
	})
	worker, err := newTaskPod(job, taskPod{typ: "worker"}, clusterView{workerNum: 1})
	if err != nil {
		t.Fatal(err)
	}
	worker.Status.Phase = corev1.PodSucceeded
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(worker).Build()
	r := NewReconciler(c, c, nil, "")
	setCondition(job, elasticv1alpha1.JobRunning, ReasonJobRunning, "running")

	hasMaster, err := r.sync(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	if !hasMaster || finished(job) || job.Status.Phase != elasticv1alpha1.JobRunning {
		t.Errorf("hasMaster %v phase %q, want true and Running", hasMaster, job.Status.Phase)
	}

	noMaster := testJob(elasticv1alpha1.AllreduceStrategy, map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{"worker": spec(1)})
	if hasMaster, err = r.sync(t.Context(), noMaster); err != nil || hasMaster || noMaster.Status.Phase != elasticv1alpha1.JobSucceeded {
		t.Errorf("without a master: hasMaster %v phase %q err %v, want the workers to decide Succeeded", hasMaster, noMaster.Status.Phase, err)
	}
}
