//go:build e2e

package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/test/cluster"
)

// pdshTrain is a DeepSpeedJob's customCommand: pdsh runs the training on
// every host of the hostfile the controller wrote, over SSH with the job's
// key, in a shell that reads the env file the controller wrote (the only
// source of MASTER_ADDR, MASTER_PORT and WORLD_SIZE there) and takes its
// rank from its host name, <job>-worker-<rank>.
const pdshTrain = `hosts=$(while read -r h _; do printf '%s,' "$h"; done < /job/hostfile)
exec pdsh -R ssh -w "${hosts%,}" 'set -a; . /job/.deepspeed_env; set +a; h=$(cat /proc/sys/kernel/hostname); RANK=${h##*-} exec python3 /scripts/train.py --epochs=20'`

// TestDeepSpeedJobPDSH runs a DeepSpeedJob of two workers whose
// customCommand starts torch DDP on both through pdsh: worker 0's log
// holds both ranks' final line, the same model in a world of 2.
func TestDeepSpeedJobPDSH(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	createScripts(t, ns)
	c := crClient(t)
	tmpl := workload("worker", cluster.PDSHImage)
	tmpl.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "MASTER_ADDR", Value: "ds-worker-0"}, {Name: "MASTER_PORT", Value: "29500"}, {Name: "WORLD_SIZE", Value: "2"},
	}
	job := &batchv1beta1.DeepSpeedJob{
		ObjectMeta: metav1.ObjectMeta{Name: "ds", Namespace: ns},
		Spec: batchv1beta1.DeepSpeedJobSpec{
			Worker:    batchv1beta1.DeepSpeedWorkerSpec{Replicas: ptr.To[int32](2), Template: tmpl},
			Config:    batchv1beta1.DeepSpeedConfig{CustomCommand: pdshTrain},
			RunPolicy: batchv1beta1.RunPolicy{CleanUpPolicy: batchv1beta1.CleanUpPolicyUnfinished},
		},
	}
	if err := c.Create(jobContext(t), job); err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, job, "Succeeded", phase(batchv1beta1.JobSucceeded))
	ranks, losses := map[string]bool{}, map[string]bool{}
	for _, m := range waitLogMatches(t, ns, "ds-worker-0", finalLoss, 2) {
		if m[2] != "2" {
			t.Errorf("rank %s trained in a world of %s, want 2", m[1], m[2])
		}
		ranks[m[1]], losses[m[4]] = true, true
	}
	if len(ranks) != 2 || len(losses) != 1 {
		t.Errorf("ranks %v with final losses %v: want ranks 0 and 1 with one loss", ranks, losses)
	}
}
