package tensorflow

import (
	"strconv"

	"github.com/accelstack/accelstack/pkg/jobs"
)

// task is the task part of TF_CONFIG.
type task struct {
	Type  string `json:"type"`
	Index int32  `json:"index"`
}

// denseConfig is TF_CONFIG as the Kubeflow training operator writes it:
// every replica of every type in the cluster, keys sorted.
type denseConfig struct {
	Cluster     map[string][]string `json:"cluster"`
	Task        task                `json:"task"`
	Environment string              `json:"environment"`
}

// sparseCluster names only the parameter servers and the replica itself, so
// that workers can join and leave without changing the others' cluster.
type sparseCluster struct {
	Worker map[string]string `json:"worker"`
	PS     []string          `json:"ps"`
}

type sparseConfig struct {
	Cluster sparseCluster `json:"cluster"`
	Task    task          `json:"task"`
}

// TFConfig returns the TF_CONFIG of replica typ rank of job: dense, or
// sparse for dynamic workers (a ps lists itself; a worker lists every ps and
// itself; other types list nothing).
func TFConfig(job *jobs.Job, typ string, rank int32, sparse bool) string {
	t := task{Type: typ, Index: rank}
	if sparse {
		c := sparseCluster{Worker: map[string]string{}, PS: []string{}}
		switch typ {
		case "ps":
			c.PS = append(c.PS, address(job, job.Replica(typ), rank))
		case "worker":
			if ps := job.Replica("ps"); ps != nil {
				for i := int32(0); i < ps.Replicas; i++ {
					c.PS = append(c.PS, address(job, ps, i))
				}
			}
			c.Worker[strconv.Itoa(int(rank))] = address(job, job.Replica(typ), rank)
		}
		return jobs.ToJSON(sparseConfig{Cluster: c, Task: t})
	}
	cluster := map[string][]string{}
	for i := range job.Replicas {
		r := &job.Replicas[i]
		if r.Replicas == 0 {
			continue
		}
		for j := int32(0); j < r.Replicas; j++ {
			cluster[r.Type] = append(cluster[r.Type], address(job, r, j))
		}
	}
	return jobs.ToJSON(denseConfig{Cluster: cluster, Task: t, Environment: "cloud"})
}
