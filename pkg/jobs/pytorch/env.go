package pytorch

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// Decorate sets the torch.distributed environment in every container (as
// the Kubeflow training operator does: PYTHONUNBUFFERED, MASTER_PORT,
// PET_MASTER_PORT, MASTER_ADDR, PET_MASTER_ADDR, WORLD_SIZE, RANK,
// PET_NODE_RANK, PET_NNODES and, with torchrun, PET_NPROC_PER_NODE) and
// rewrites the main container into a torchrun launch when torchrunConfig is
// enabled.
func (Kind) Decorate(pod *corev1.Pod, r *jobs.Replica, rank int32, job *jobs.Job) []string {
	pj := job.Object.(*batchv1beta1.PyTorchTrainingJob)
	master := &job.Replicas[0]
	addr := jobs.PodName(pj.Name, master.Type, 0)
	port := strconv.Itoa(int(master.ServicePort()))
	offset := int32(0)
	for _, o := range job.Replicas {
		if o.Type == r.Type {
			break
		}
		offset += o.Replicas
	}
	world := job.Total()
	if n := nproc(pj, r); n > 1 {
		world *= int32(n)
	}
	nodeRank := strconv.Itoa(int(offset + rank))
	vars := []corev1.EnvVar{
		{Name: "PYTHONUNBUFFERED", Value: "1"},
		{Name: "MASTER_PORT", Value: port},
		{Name: "PET_MASTER_PORT", Value: port},
		{Name: "MASTER_ADDR", Value: addr},
		{Name: "PET_MASTER_ADDR", Value: addr},
		{Name: "WORLD_SIZE", Value: strconv.Itoa(int(world))},
		{Name: "RANK", Value: nodeRank},
		{Name: "PET_NODE_RANK", Value: nodeRank},
		{Name: "PET_NNODES", Value: nnodes(pj, job)},
	}
	tc := pj.Spec.TorchrunConfig
	if tc != nil && tc.Enabled {
		vars = append(vars, corev1.EnvVar{Name: "PET_NPROC_PER_NODE", Value: procPerNode(pj, r)})
	}
	jobs.SetEnvAll(pod, vars...)
	if tc != nil && tc.Enabled {
		if c := jobs.MainContainer(&pod.Spec, r.MainContainer); c != nil {
			c.Command, c.Args = torchrun(pj, job, r, c.Command, c.Args, addr+":"+port)
		}
	}
	return nil
}

// nnodes returns torchrun's --nnodes: the number of replicas, or min:max
// under elastic training (or minNodes:replicas).
func nnodes(pj *batchv1beta1.PyTorchTrainingJob, job *jobs.Job) string {
	if e := elasticOf(pj); e != nil {
		return fmt.Sprintf("%d:%d", e.min, e.max)
	}
	total := job.Total()
	if tc := pj.Spec.TorchrunConfig; tc != nil && tc.Enabled && tc.MinNodes != nil && *tc.MinNodes < total {
		return fmt.Sprintf("%d:%d", *tc.MinNodes, total)
	}
	return strconv.Itoa(int(total))
}

// procPerNode returns torchrun's --nproc_per_node for replica r.
func procPerNode(pj *batchv1beta1.PyTorchTrainingJob, r *jobs.Replica) string {
	if n := nproc(pj, r); n > 0 {
		return strconv.Itoa(n)
	}
	return pj.Spec.TorchrunConfig.ProcPerNode
}

// torchrun returns the command and args that launch command+args under
// torchrun: a leading python interpreter is dropped (torchrun is one), any
// other program runs with --no_python. Options are written with
// underscores, the only spelling torchrun knew before PyTorch 2.0 and one
// it still accepts.
func torchrun(pj *batchv1beta1.PyTorchTrainingJob, job *jobs.Job, r *jobs.Replica, command, args []string, endpoint string) ([]string, []string) {
	tc := pj.Spec.TorchrunConfig
	backend := tc.RdzvBackend
	if backend == "" {
		backend = "c10d"
	}
	opts := []string{
		"--nnodes=" + nnodes(pj, job),
		"--nproc_per_node=" + procPerNode(pj, r),
		"--rdzv_backend=" + backend,
		"--rdzv_endpoint=" + endpoint,
		"--rdzv_id=" + string(pj.UID),
	}
	if tc.MaxRestarts != nil {
		opts = append(opts, "--max_restarts="+strconv.Itoa(int(*tc.MaxRestarts)))
	}
	opts = append(opts, tc.ExtraOptions...)
	program := append([]string(nil), command...)
	if len(program) > 0 && isPython(program[0]) {
		program = program[1:]
	} else if len(program) > 0 {
		opts = append(opts, "--no_python")
	}
	return []string{"torchrun"}, append(append(opts, program...), args...)
}

// isPython reports whether program is a Python interpreter.
func isPython(program string) bool {
	base := path.Base(program)
	if !strings.HasPrefix(base, "python") {
		return false
	}
	rest := strings.TrimPrefix(base, "python")
	return strings.Trim(rest, "0123456789.") == ""
}
