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

// FlinkClusterCRD is the name of the CustomResourceDefinition of
// FlinkCluster, which flink-operator installs.
const FlinkClusterCRD = "flinkclusters.flinkoperator.k8s.io"

// Labels flink-operator puts on the cluster's pods, and the cluster state
// the submitter waits for.
const (
	flinkAppLabel        = "app"
	flinkAppValue        = "flink"
	flinkClusterLabel    = "cluster"
	flinkComponentLabel  = "component"
	componentJobManager  = "jobmanager"
	componentTaskManager = "taskmanager"
	// ClusterStateRunning is the FlinkCluster state once every component
	// is ready.
	ClusterStateRunning = "Running"
)

// ClusterName returns the name of a BeamJob's FlinkCluster.
func ClusterName(job string) string { return job + "-flinkcluster" }

// newClusterObject returns an empty FlinkCluster.
func newClusterObject() *unstructured.Unstructured {
	fc := &unstructured.Unstructured{}
	fc.SetGroupVersionKind(FlinkClusterGVK)
	return fc
}

// newFlinkCluster returns the FlinkCluster of bj: its template's metadata
// and spec, with the job's labels on the cluster and, through the
// jobManager's and taskManager's podLabels where the template has these
// components, on its pods.
func newFlinkCluster(bj *batchv1beta1.BeamJob) (*unstructured.Unstructured, error) {
	fc := newClusterObject()
	fc.SetNamespace(bj.Namespace)
	fc.SetName(ClusterName(bj.Name))
	t := bj.Spec.FlinkClusterTemplate
	own := jobs.Labels(Component, bj.Name)
	fc.SetLabels(merge(t.Metadata.Labels, own))
	if len(t.Metadata.Annotations) > 0 {
		fc.SetAnnotations(t.Metadata.Annotations)
	}
	spec := map[string]any{}
	if len(t.Spec.Raw) > 0 {
		if err := json.Unmarshal(t.Spec.Raw, &spec); err != nil {
			return nil, fmt.Errorf("reading spec.flinkClusterTemplate.spec: %w", err)
		}
	}
	for _, component := range []string{"jobManager", "taskManager"} {
		if _, ok := spec[component].(map[string]any); !ok {
			continue // left to flink-operator's defaults
		}
		podLabels, _, err := unstructured.NestedStringMap(spec, component, "podLabels")
		if err != nil {
			return nil, fmt.Errorf("reading spec.flinkClusterTemplate.spec.%s.podLabels: %w", component, err)
		}
		m := map[string]any{}
		for k, v := range merge(podLabels, own) {
			m[k] = v
		}
		if err := unstructured.SetNestedField(spec, m, component, "podLabels"); err != nil {
			return nil, fmt.Errorf("setting spec.flinkClusterTemplate.spec.%s.podLabels: %w", component, err)
		}
	}
	fc.Object["spec"] = spec
	return fc, nil
}

// merge returns the labels of a overridden by those of b.
func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// clusterState returns the FlinkCluster's status.state, "" for none.
func clusterState(fc *unstructured.Unstructured) string {
	if fc == nil {
		return ""
	}
	state, _, _ := unstructured.NestedString(fc.Object, "status", "state")
	return state
}

// JobURL returns the page of Flink job id of cluster in the Flink web UI.
func JobURL(ns, cluster, id string) string {
	return fmt.Sprintf("/t9k/flink-cluster/%s/namespace/%s/#/job/%s/overview/", cluster, ns, id)
}
