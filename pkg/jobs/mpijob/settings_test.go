package mpijob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// seedJob returns an MPIJob in the worker layout with three workers of 2
// GPUs each.
func seedJob() *batchv1beta1.MPIJob {
	mj := &batchv1beta1.MPIJob{}
	mj.Name = "mpi"
	mj.Spec.Worker = &batchv1beta1.MPIWorkerSpec{
		Replicas: ptr.To[int32](3),
		Cmd:      []string{"./random_walk", "20"},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: SeedContainer, Image: "mpi",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}},
		}}}},
	}
	return mj
}

// TestProcessesPerWorker: processesPerWorker sets each worker's slots in
// the hostfile, in place of its accelerators; -N in extraMPIArgs still
// raises them.
func TestProcessesPerWorker(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ppw   *int32
		extra []string
		want  int32
	}{
		{"from the GPUs", nil, nil, 2},
		{"processesPerWorker", ptr.To[int32](3), nil, 3},
		{"fewer than the GPUs", ptr.To[int32](1), nil, 1},
		{"raised by -N", ptr.To[int32](3), []string{"-N", "4"}, 4},
	} {
		mj := seedJob()
		mj.Spec.Worker.ProcessesPerWorker = tc.ppw
		mj.Spec.Worker.ExtraMPIArgs = tc.extra
		if got := settingsOf(mj).slots; got != tc.want {
			t.Errorf("%s: %d slots, want %d", tc.name, got, tc.want)
		}
	}
}

// TestProcessRecovery: processRecovery makes mpirun restart failed
// processes, up to its limit (3 unset); disabled or unset, mpirun runs as
// before.
func TestProcessRecovery(t *testing.T) {
	base := []string{"mpirun", "--hostfile", "/etc/mpi/hostfile"}
	for _, tc := range []struct {
		name     string
		recovery *batchv1beta1.MPIProcessRecovery
		want     []string
	}{
		{"unset", nil, base},
		{"disabled", &batchv1beta1.MPIProcessRecovery{Limit: ptr.To[int32](5)}, base},
		{"seed", &batchv1beta1.MPIProcessRecovery{Enable: true, Limit: ptr.To[int32](100)}, append(base[:3:3], "--enable-recovery", "--max-restarts", "100")},
		{"no limit", &batchv1beta1.MPIProcessRecovery{Enable: true}, append(base[:3:3], "--enable-recovery", "--max-restarts", "3")},
	} {
		mj := seedJob()
		mj.Spec.Worker.ProcessRecovery = tc.recovery
		want := append(tc.want[:len(tc.want):len(tc.want)], "./random_walk", "20")
		if got := settingsOf(mj).mpirun(); !cmp.Equal(got, want) {
			t.Errorf("%s: mpirun %q, want %q", tc.name, got, want)
		}
	}
}
