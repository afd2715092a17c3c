package elasticjob

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

// EnvTfConfigName is the environment variable that holds a task's TensorFlow
// cluster.
const EnvTfConfigName = "TF_CONFIG"

// TaskSpec is the task of TF_CONFIG: a replica type and its index.
type TaskSpec struct {
	Type  elasticv1alpha1.ReplicaType `json:"type"`
	Index int                         `json:"index"`
}

// SparseClusterSpec is the part of a TensorFlow cluster one task needs to
// know: workers and evaluators by index, the chief by index, and every
// parameter server.
type SparseClusterSpec struct {
	Worker    map[int]string `json:"worker,omitempty"`
	PS        []string       `json:"ps"`
	Chief     map[int]string `json:"chief"`
	Evaluator map[int]string `json:"evaluator,omitempty"`
}

// SparseTFConfig is a sparse cluster and a task.
type SparseTFConfig struct {
	Cluster SparseClusterSpec `json:"sparseCluster"`
	Task    TaskSpec          `json:"task"`
}

// ClusterSpec is a TensorFlow cluster: the addresses of each job's tasks.
type ClusterSpec struct {
	Worker    []string `json:"worker,omitempty"`
	PS        []string `json:"ps"`
	Chief     []string `json:"chief"`
	Evaluator []string `json:"evaluator,omitempty"`
}

// TFConfig is what TF_CONFIG holds: the cluster and this task. Like
// DLRover's, it has no "environment" key.
type TFConfig struct {
	Cluster ClusterSpec `json:"cluster"`
	Task    TaskSpec    `json:"task"`
}

// Dense lists a sparse cluster's addresses in index order.
func (s SparseClusterSpec) Dense() ClusterSpec {
	return ClusterSpec{
		Worker:    byIndex(s.Worker),
		PS:        s.PS,
		Chief:     byIndex(s.Chief),
		Evaluator: byIndex(s.Evaluator),
	}
}

// byIndex returns m's values ordered by key; nil for an empty map.
func byIndex(m map[int]string) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// TFConfigJSON is the TF_CONFIG value of task rankIndex of taskType in
// cluster.
func TFConfigJSON(cluster SparseClusterSpec, taskType elasticv1alpha1.ReplicaType, rankIndex int) (string, error) {
	b, err := json.Marshal(TFConfig{Cluster: cluster.Dense(), Task: TaskSpec{Type: taskType, Index: rankIndex}})
	if err != nil {
		return "", fmt.Errorf("marshalling TF_CONFIG: %w", err)
	}
	return string(b), nil
}

// InsertTfConfigToEnv appends TF_CONFIG, the dense form of cluster for task
// rankIndex of taskType, to the container's environment.
func InsertTfConfigToEnv(container *corev1.Container, cluster SparseClusterSpec, taskType elasticv1alpha1.ReplicaType, rankIndex int) error {
	v, err := TFConfigJSON(cluster, taskType, rankIndex)
	if err != nil {
		return err
	}
	container.Env = append(container.Env, corev1.EnvVar{Name: EnvTfConfigName, Value: v})
	return nil
}

// sparseClusterFor is the cluster a new task pod of taskType and rank sees,
// as DLRover builds it: every parameter server; the chief at index 0 (and
// the pod itself, for a chief); all workers below workers for a parameter
// server, or workers 0 to its own rank for a worker; and itself for an
// evaluator.
func sparseClusterFor(job string, taskType elasticv1alpha1.ReplicaType, rank int, psHosts []string, workers int) SparseClusterSpec {
	s := SparseClusterSpec{
		PS:    psHosts,
		Chief: map[int]string{0: TaskServiceAddr(job, elasticv1alpha1.ReplicaTypeChief, 0)},
	}
	self := TaskServiceAddr(job, taskType, rank)
	switch taskType {
	case elasticv1alpha1.ReplicaTypeChief:
		s.Chief[rank] = self
	case elasticv1alpha1.ReplicaTypePS:
		s.Worker = map[int]string{}
		for i := range workers {
			s.Worker[i] = TaskServiceAddr(job, elasticv1alpha1.ReplicaTypeWorker, i)
		}
	case elasticv1alpha1.ReplicaTypeWorker:
		s.Worker = map[int]string{}
		for i := 0; i <= rank; i++ {
			s.Worker[i] = TaskServiceAddr(job, elasticv1alpha1.ReplicaTypeWorker, i)
		}
	case elasticv1alpha1.ReplicaTypeEvaluator:
		s.Evaluator = map[int]string{rank: self}
	}
	return s
}

// psHostsOf lists the addresses of parameter servers 0 to n-1.
func psHostsOf(job string, n int) []string {
	hosts := make([]string, 0, n)
	for i := range n {
		hosts = append(hosts, TaskServiceAddr(job, elasticv1alpha1.ReplicaTypePS, i))
	}
	return hosts
}
