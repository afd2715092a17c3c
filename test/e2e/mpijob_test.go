//go:build e2e

package e2e

import (
	"regexp"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/cluster"
)

// TestMPIJobAllreduce runs an MPIJob of 2 workers × 2 slots in the seed's
// layout: the launcher's mpirun reaches both workers over SSH with the key
// and hostfile the controller wrote, and every one of the 4 ranks prints
// the same allreduced sum, 1+2+3+4.
func TestMPIJobAllreduce(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createScripts(t, ns)
	c := crClient(t)
	job := &batchv1beta1.MPIJob{
		ObjectMeta: metav1.ObjectMeta{Name: "allreduce", Namespace: ns},
		Spec: batchv1beta1.MPIJobSpec{
			Worker: &batchv1beta1.MPIWorkerSpec{
				Replicas:     ptr.To[int32](2),
				ExtraMPIArgs: []string{"-N", "2", "--allow-run-as-root", "--mca", "btl_tcp_if_include", "eth0", "--mca", "oob_tcp_if_include", "eth0"},
				Cmd:          []string{"python3", scriptsDir + "/allreduce.py"},
				Template:     workload("mpi-worker", cluster.MPIImage),
			},
			MCA:       map[string]string{"btl": "^openib"},
			RunPolicy: batchv1beta1.MPIRunPolicy{CleanUpWorkers: true},
		},
	}
	if err := c.Create(jobContext(t), job); err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, job, "Succeeded", phase(batchv1beta1.JobSucceeded))
	re := regexp.MustCompile(`rank=(\d+) size=(\d+) host=(\S+) sum=(\d+)`)
	ranks, hosts := map[string]bool{}, map[string]bool{}
	for _, m := range waitLogMatches(t, ns, "allreduce-launcher", re, 4) {
		if m[2] != "4" || m[4] != strconv.Itoa(1+2+3+4) {
			t.Errorf("rank %s: size %s sum %s, want 4 and 10", m[1], m[2], m[4])
		}
		ranks[m[1]], hosts[m[3]] = true, true
	}
	if len(ranks) != 4 || !hosts["allreduce-worker-0"] || !hosts["allreduce-worker-1"] || len(hosts) != 2 {
		t.Errorf("ranks %v on hosts %v, want 4 ranks on the two workers", ranks, hosts)
	}
	waitJobPods(t, ns, "allreduce", "workers cleaned up", func(pods map[string]corev1.Pod) bool {
		_, launcher := pods["allreduce-launcher"]
		return len(pods) == 1 && launcher
	})
}
