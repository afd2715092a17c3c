package elasticjob

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

// spec is a replica spec of one container with an image.
func spec(replicas int32) *elasticv1alpha1.ReplicaSpec {
	s := &elasticv1alpha1.ReplicaSpec{}
	s.Replicas = replicas
	s.Template.Spec.Containers = []corev1.Container{{Name: "main", Image: "trainer"}}
	return s
}

func TestValidateElasticJob(t *testing.T) {
	type specs = map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec
	masterNoImage := spec(0)
	masterNoImage.Template.Spec.Containers[0].Image = ""
	for _, tc := range []struct {
		name      string
		strategy  string
		specs     specs
		wantField string // empty: valid
	}{
		{"ps job", elasticv1alpha1.ParameterServerStrategy, specs{"ps": spec(1), "worker": spec(2)}, ""},
		{"master without image", "", specs{"worker": spec(1), "dlrover-master": masterNoImage}, ""},
		{"priority fraction", "", specs{"worker": func() *elasticv1alpha1.ReplicaSpec { s := spec(1); s.Priority = "0.5"; return s }()}, ""},
		{"unknown type", "", specs{"Worker": spec(1)}, "spec.replicaSpecs"},
		{"null spec", "", specs{"worker": nil}, "spec.replicaSpecs[worker]"},
		{"negative replicas", "", specs{"worker": spec(-1)}, "spec.replicaSpecs[worker].replicas"},
		{"obsolete strategy", "parameter_server", specs{"worker": spec(1)}, "spec.distributionStrategy"},
		{"bad template restart policy", "", specs{"worker": func() *elasticv1alpha1.ReplicaSpec {
			s := spec(1)
			s.Template.Spec.RestartPolicy = "Sometimes"
			return s
		}()}, "spec.replicaSpecs[worker].template.spec.restartPolicy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &elasticv1alpha1.ElasticJob{Spec: elasticv1alpha1.ElasticJobSpec{DistributionStrategy: tc.strategy, ReplicaSpecs: tc.specs}}
			errs := ValidateElasticJob(job)
			switch {
			case tc.wantField == "" && len(errs) > 0:
				t.Errorf("errors %v, want none", errs)
			case tc.wantField != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.wantField+":")):
				t.Errorf("errors %v, want one on %s", errs, tc.wantField)
			}
		})
	}
}

func TestPlanOwner(t *testing.T) {
	for _, tc := range []struct {
		owner  string
		labels map[string]string
		want   string
	}{
		{"a", map[string]string{elasticv1alpha1.JobNameLabelKey: "b"}, "a"},
		{"", map[string]string{elasticv1alpha1.JobNameLabelKey: "b", elasticv1alpha1.LegacyJobNameLabelKey: "c"}, "b"},
		{"", map[string]string{elasticv1alpha1.LegacyJobNameLabelKey: "c"}, "c"},
		{"", nil, ""},
	} {
		p := &elasticv1alpha1.ScalePlan{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}, Spec: elasticv1alpha1.ScaleSpec{OwnerJob: tc.owner}}
		if got := PlanOwner(p); got != tc.want {
			t.Errorf("PlanOwner(%q, %v) = %q, want %q", tc.owner, tc.labels, got, tc.want)
		}
	}
}

func TestValidateScalePlanWithoutJob(t *testing.T) {
	p := &elasticv1alpha1.ScalePlan{Spec: elasticv1alpha1.ScaleSpec{OwnerJob: "j",
		ReplicaResourceSpecs: map[elasticv1alpha1.ReplicaType]elasticv1alpha1.ReplicaResourceSpec{"ps": {Replicas: 1}, "dlrover-master": {}}}}
	if errs := ValidateScalePlan(p, nil); len(errs) > 0 {
		t.Errorf("errors %v: without the job, known types pass", errs)
	}
	job := &elasticv1alpha1.ElasticJob{Spec: elasticv1alpha1.ElasticJobSpec{ReplicaSpecs: map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{"worker": spec(1)}}}
	if errs := ValidateScalePlan(p, job); len(errs) != 1 || !strings.Contains(errs[0].Field, "replicaResourceSpecs[ps]") {
		t.Errorf("errors %v, want one on replicaResourceSpecs[ps]", errs)
	}
}

func TestRestartLimit(t *testing.T) {
	for _, tc := range []struct{ count, want int }{{0, 3}, {1, 1}, {5, 5}, {9, 5}} {
		s := &elasticv1alpha1.ReplicaSpec{RestartCount: tc.count}
		if got := RestartLimit(s); got != tc.want {
			t.Errorf("RestartLimit(%d) = %d, want %d", tc.count, got, tc.want)
		}
	}
}
