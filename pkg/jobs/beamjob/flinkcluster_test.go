package beamjob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

func beamJob(spec string) *batchv1beta1.BeamJob {
	return &batchv1beta1.BeamJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "t9k-example", Name: "beamjob-example"},
		Spec: batchv1beta1.BeamJobSpec{
			FlinkClusterTemplate: batchv1beta1.FlinkClusterTemplate{
				Metadata: metav1.ObjectMeta{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "n"}},
				Spec:     runtime.RawExtension{Raw: []byte(spec)},
			},
			JobTemplate: &batchv1.JobTemplateSpec{},
		},
	}
}

func TestNewFlinkCluster(t *testing.T) {
	bj := beamJob(`{"flinkVersion":"1.10.1","image":{"name":"flink:1.10.1"},
		"jobManager":{"accessScope":"Cluster","podLabels":{"x":"y"}},"flinkProperties":{"taskmanager.numberOfTaskSlots":"1"}}`)
	fc, err := newFlinkCluster(bj)
	if err != nil {
		t.Fatal(err)
	}
	if fc.GetName() != "beamjob-example-flinkcluster" || fc.GetNamespace() != "t9k-example" || fc.GetKind() != "FlinkCluster" ||
		fc.GetAPIVersion() != "flinkoperator.k8s.io/v1beta1" {
		t.Errorf("object %s %s/%s", fc.GetAPIVersion(), fc.GetNamespace(), fc.GetName())
	}
	own := map[string]string{"batch.tensorstack.dev/job-name": "beamjob-example", "tensorstack.dev/component": "beamjob", "beamjob": "beamjob-example"}
	wantLabels := merge(own, map[string]string{"team": "a"})
	if diff := cmp.Diff(wantLabels, fc.GetLabels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if fc.GetAnnotations()["note"] != "n" {
		t.Errorf("annotations %v", fc.GetAnnotations())
	}
	want := map[string]any{
		"flinkVersion": "1.10.1", "image": map[string]any{"name": "flink:1.10.1"},
		"jobManager": map[string]any{"accessScope": "Cluster", "podLabels": map[string]any{
			"x": "y", "batch.tensorstack.dev/job-name": "beamjob-example", "tensorstack.dev/component": "beamjob", "beamjob": "beamjob-example"}},
		"flinkProperties": map[string]any{"taskmanager.numberOfTaskSlots": "1"},
	}
	if diff := cmp.Diff(want, fc.Object["spec"]); diff != "" {
		t.Errorf("spec (-want +got), taskManager left to the operator's defaults:\n%s", diff)
	}
}

func TestNewFlinkClusterBadTemplate(t *testing.T) {
	if _, err := newFlinkCluster(beamJob(`{"jobManager":{"podLabels":"x"}}`)); err == nil {
		t.Error("podLabels of a string accepted")
	}
}

func TestJobURL(t *testing.T) {
	got := JobURL("t9k-example", ClusterName("beamjob-example"), "c9f62e4d61d089f351ab1f8b29e1df32")
	want := "/t9k/flink-cluster/beamjob-example-flinkcluster/namespace/t9k-example/#/job/c9f62e4d61d089f351ab1f8b29e1df32/overview/"
	if got != want {
		t.Errorf("JobURL = %q, want %q", got, want)
	}
}
