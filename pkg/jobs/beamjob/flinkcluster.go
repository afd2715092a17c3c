package beamjob

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

// FlinkClusterGVK is flink-operator's FlinkCluster.
var FlinkClusterGVK = schema.GroupVersionKind{Group: "flinkoperator.k8s.io", Version: "v1beta1", Kind: "FlinkCluster"}

// Labels flink-operator puts on the cluster's pods.
const (
	flinkClusterLabel   = "cluster"
	flinkComponentLabel = "component"
	componentJobManager = "jobmanager"
	componentTaskManger = "taskmanager"
	// ClusterStateRunning is the FlinkCluster state once every component
	// is ready.
	ClusterStateRunning = "Running"
)

// ClusterName returns the name of a BeamJob's FlinkCluster.
func ClusterName(job string) string { return job + "-flinkcluster" }

// newFlinkCluster returns the FlinkCluster of bj: its template's metadata
// and spec, with the job's labels.
func newFlinkCluster(bj *batchv1beta1.BeamJob) (*unstructured.Unstructured, error) {
	fc := &unstructured.Unstructured{Object: map[string]any{}}
	fc.SetGroupVersionKind(FlinkClusterGVK)
	fc.SetNamespace(bj.Namespace)
	fc.SetName(ClusterName(bj.Name))
	t := bj.Spec.FlinkClusterTemplate
	labels := map[string]string{}
	for k, v := range t.Metadata.Labels {
		labels[k] = v
	}
	for k, v := range jobs.Labels(Component, bj.Name) {
		labels[k] = v
	}
	fc.SetLabels(labels)
	if len(t.Metadata.Annotations) > 0 {
		fc.SetAnnotations(t.Metadata.Annotations)
	}
	spec := map[string]any{}
	if len(t.Spec.Raw) > 0 {
		if err := json.Unmarshal(t.Spec.Raw, &spec); err != nil {
			return nil, fmt.Errorf("reading spec.flinkClusterTemplate.spec: %w", err)
		}
	}
	fc.Object["spec"] = spec
	return fc, nil
}

// clusterState returns the FlinkCluster's status.state and, when it runs a
// job, the Flink job's ID.
func clusterState(fc *unstructured.Unstructured) (state, jobID string) {
	state, _, _ = unstructured.NestedString(fc.Object, "status", "state")
	jobID, _, _ = unstructured.NestedString(fc.Object, "status", "components", "job", "id")
	return state, jobID
}

// JobURL returns the page of Flink job id of cluster in the Flink web UI.
func JobURL(ns, cluster, id string) string {
	return fmt.Sprintf("/t9k/flink-cluster/%s/namespace/%s/#/job/%s/overview/", cluster, ns, id)
}
