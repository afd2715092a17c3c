package beamjob

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

func TestNewSubmitter(t *testing.T) {
	bj := beamJob(`{}`)
	bj.Spec.JobTemplate.Labels = map[string]string{"a": "b"}
	bj.Spec.JobTemplate.Spec.Template.Labels = map[string]string{"c": "d"}
	bj.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: "submit-job", Image: "beam"}}
	bj.Spec.Scheduler = &batchv1beta1.SchedulePolicy{T9kScheduler: &batchv1beta1.T9kScheduler{Queue: "default", Priority: 50}}
	job, err := newSubmitter(bj)
	if err != nil {
		t.Fatal(err)
	}
	if job.Name != "" || job.GenerateName != "beamjob-example-batchjob-" || job.Namespace != "t9k-example" {
		t.Errorf("name %q generateName %q namespace %q", job.Name, job.GenerateName, job.Namespace)
	}
	if l := job.Labels; l["a"] != "b" || l[jobs.JobNameLabel] != bj.Name || l[jobs.ComponentLabel] != Component {
		t.Errorf("labels %v", l)
	}
	p := job.Spec.Template
	if l := p.Labels; l["c"] != "d" || l[jobs.JobNameLabel] != bj.Name || l[jobs.QueueLabel] != "default" || l[jobs.ComponentTypeLabel] != jobs.ComponentTypeUser {
		t.Errorf("pod labels %v", l)
	}
	if p.Spec.SchedulerName != jobs.SchedulerName || p.Spec.Containers[0].Name != "submit-job" {
		t.Errorf("pod spec %+v", p.Spec)
	}
	if bj.Spec.JobTemplate.Spec.Template.Labels[jobs.JobNameLabel] != "" {
		t.Error("the template was changed")
	}
}

func TestNewSubmitterDefaultScheduler(t *testing.T) {
	job, err := newSubmitter(beamJob(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if job.Spec.Template.Spec.SchedulerName != "" || job.Spec.Template.Labels[jobs.QueueLabel] != "" {
		t.Errorf("scheduler %q labels %v", job.Spec.Template.Spec.SchedulerName, job.Spec.Template.Labels)
	}
}

func TestNewSubmitterWithoutTemplate(t *testing.T) {
	bj := beamJob(`{}`)
	bj.Spec.JobTemplate = nil
	if _, err := newSubmitter(bj); err == nil {
		t.Error("no error")
	}
}
