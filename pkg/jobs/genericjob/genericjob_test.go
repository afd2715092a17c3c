package genericjob

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
)

func genericJob(service bool) *batchv1beta1.GenericJob {
	gj := &batchv1beta1.GenericJob{
		ObjectMeta: metav1.ObjectMeta{Name: "gen", Namespace: "ns"},
		Spec: batchv1beta1.GenericJobSpec{ReplicaSpecs: []batchv1beta1.ReplicaSpec{
			{Type: "master", Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}}},
			{Type: "worker", Replicas: ptr.To[int32](3), RestartPolicy: &batchv1beta1.RestartPolicy{Policy: batchv1beta1.RestartPolicyNever, Limit: 2},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}}},
		}},
	}
	if service {
		gj.Spec.Service = &batchv1beta1.ServiceOption{Ports: []corev1.ServicePort{{Name: "http", Port: 2222}, {Name: "grpc", Port: 50051}}}
	}
	return gj
}

func TestExpand(t *testing.T) {
	v := &vars{job: genericJob(true), typ: "worker", rank: 2}
	for in, want := range map[string]string{
		"$(type)-$(rank)": "worker-2",
		"n=$(replicas[worker]) m=$(replicas[master])":     "n=3 m=1",
		"$(service.master[0].host):$(service.port[http])": "gen-master-0:2222",
		"$(service.worker[2].host):$(service.port[grpc])": "gen-worker-2:50051",
		"$(HOME) $(MY_VAR)":         "$(HOME) $(MY_VAR)",
		"$(replicas[ps])":           "$(replicas[ps])",
		"$(service.worker[3].host)": "$(service.worker[3].host)",
		"$(service.port[ssh])":      "$(service.port[ssh])",
		"$(service.worker.host)":    "$(service.worker.host)",
		"no variables":              "no variables",
	} {
		if got := v.expand(in); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
	want := []string{
		"variable $(replicas[ps]) left as written: no replica type ps",
		"variable $(service.port[ssh]) left as written: no port named ssh in spec.service.ports",
		"variable $(service.worker.host) left as written: not a GenericJob variable",
		"variable $(service.worker[3].host) left as written: no rank 3 among the 3 worker replicas",
	}
	if diff := cmp.Diff(want, v.unknownNotes()); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}

	noService := &vars{job: genericJob(false), typ: "worker", rank: 0}
	if got := noService.expand("$(service.master[0].host)"); got != "$(service.master[0].host)" {
		t.Errorf("without a service: %q", got)
	}
	if notes := noService.unknownNotes(); len(notes) != 1 || !strings.Contains(notes[0], "spec.service is not set") {
		t.Errorf("without a service: notes %v", notes)
	}
}

func TestDecorate(t *testing.T) {
	gj := genericJob(true)
	gj.Spec.ReplicaSpecs[1].Template.Spec.InitContainers = []corev1.Container{{Name: "init", Args: []string{"$(rank)"}}}
	gj.Spec.ReplicaSpecs[1].Template.Spec.Containers[0] = corev1.Container{
		Name: "main", Command: []string{"run", "--type=$(type)"}, Args: []string{"--peer=$(service.master[0].host)"},
		Env: []corev1.EnvVar{{Name: "RANK", Value: "$(rank)"}, {Name: "FROM", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
	}
	job := Kind{}.View(gj)
	pod := &corev1.Pod{Spec: *gj.Spec.ReplicaSpecs[1].Template.Spec.DeepCopy()}
	if notes := (Kind{}).Decorate(pod, &job.Replicas[1], 1, job); len(notes) != 0 {
		t.Errorf("notes %v", notes)
	}
	c := pod.Spec.Containers[0]
	if !cmp.Equal(c.Command, []string{"run", "--type=worker"}) || !cmp.Equal(c.Args, []string{"--peer=gen-master-0"}) || c.Env[0].Value != "1" || c.Env[1].ValueFrom == nil {
		t.Errorf("container %+v", c)
	}
	if pod.Spec.InitContainers[0].Args[0] != "1" {
		t.Errorf("init container %+v", pod.Spec.InitContainers[0])
	}
}

func TestView(t *testing.T) {
	job := Kind{}.View(genericJob(true))
	if job.BackoffLimit != nil || job.BackoffCount != nil || len(job.Replicas) != 2 {
		t.Fatalf("view %+v", job)
	}
	m, w := job.Replicas[0], job.Replicas[1]
	if m.Restart.Policy != batchv1beta1.ReplicaRestartOnFailure || *m.Restart.Limit != 0 || m.Replicas != 1 || !m.Service || len(m.Ports) != 2 {
		t.Errorf("master %+v", m)
	}
	if w.Restart.Policy != batchv1beta1.ReplicaRestartNever || *w.Restart.Limit != 2 || w.Replicas != 3 || w.RoleMin != 3 {
		t.Errorf("worker %+v", w)
	}
}

func TestFormatRule(t *testing.T) {
	if got := FormatRule(batchv1beta1.FinishRule{"worker": {0, 1}, "master": {2}}); got != `{ "master": [2], "worker": [0, 1] }` {
		t.Errorf("FormatRule = %s", got)
	}
	if got := FormatRule(batchv1beta1.FinishRule{"worker": {0}}); got != `{ "worker": [0] }` {
		t.Errorf("FormatRule = %s", got)
	}
}

// statesOf returns the states of gj's replicas with pods in the given
// phases; failed pods exited with code 1.
func statesOf(gj *batchv1beta1.GenericJob, phases map[string]corev1.PodPhase) *jobs.States {
	var pods []*corev1.Pod
	for name, phase := range phases {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase}}
		if phase == corev1.PodFailed {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}
		}
		pods = append(pods, p)
	}
	return jobs.StatesOf(Kind{}.View(gj), pods)
}

func TestOutcome(t *testing.T) {
	rules := genericJob(false)
	rules.Spec.SuccessRules = []batchv1beta1.FinishRule{{"master": {0}}, {"worker": {0, 1}}}
	rules.Spec.FailureRules = []batchv1beta1.FinishRule{{"worker": {2}}}
	for _, tc := range []struct {
		name   string
		gj     *batchv1beta1.GenericJob
		phases map[string]corev1.PodPhase
		want   jobs.Outcome
	}{
		{"rule: master", rules, map[string]corev1.PodPhase{"gen-master-0": "Succeeded"}, jobs.Succeed()},
		{"rule: workers", rules, map[string]corev1.PodPhase{"gen-worker-0": "Succeeded", "gen-worker-1": "Succeeded"}, jobs.Succeed()},
		{"rule: one worker", rules, map[string]corev1.PodPhase{"gen-worker-0": "Succeeded", "gen-worker-1": "Running"}, jobs.Outcome{}},
		{"rule: failure", rules, map[string]corev1.PodPhase{"gen-worker-2": "Failed"}, jobs.Fail(`The job is failed with rule: { "worker": [2] }`)},
		{"rule: other failure", rules, map[string]corev1.PodPhase{"gen-worker-1": "Failed"}, jobs.Outcome{}},
		// Success is checked before failure: both hold in one pass.
		{"rule: success and failure at once", rules, map[string]corev1.PodPhase{"gen-master-0": "Succeeded", "gen-worker-2": "Failed"}, jobs.Succeed()},
		{"default: all succeeded", genericJob(false), map[string]corev1.PodPhase{"gen-master-0": "Succeeded", "gen-worker-0": "Succeeded", "gen-worker-1": "Succeeded", "gen-worker-2": "Succeeded"}, jobs.Succeed()},
		{"default: some succeeded", genericJob(false), map[string]corev1.PodPhase{"gen-master-0": "Succeeded"}, jobs.Outcome{}},
		{"default: any failed", genericJob(false), map[string]corev1.PodPhase{"gen-worker-1": "Failed"}, jobs.Fail("The job failed: replica gen-worker-1 exited with code 1.")},
	} {
		if got := outcome(tc.gj, statesOf(tc.gj, tc.phases)); got != tc.want {
			t.Errorf("%s: outcome %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	gj := genericJob(true)
	gj.Spec.SuccessRules = []batchv1beta1.FinishRule{{"chief": {0}}, {}}
	gj.Spec.FailureRules = []batchv1beta1.FinishRule{{"worker": {3, -1}, "master": {}}}
	gj.Spec.Service.Ports = append(gj.Spec.Service.Ports, corev1.ServicePort{Name: "http", Port: 70000})
	var got []string
	for _, e := range (Kind{}).Validate(gj, nil) {
		got = append(got, e.Error())
	}
	want := []string{
		"spec.successRules[0][chief]: Not found: \"chief\"",
		"spec.successRules[1]: Invalid value: {}: a rule must name at least one replica",
		"spec.failureRules[0][master]: Invalid value: []: name at least one rank",
		"spec.failureRules[0][worker][0]: Invalid value: 3: rank out of range: type worker has 3 replicas",
		"spec.failureRules[0][worker][1]: Invalid value: -1: rank out of range: type worker has 3 replicas",
		"spec.service.ports[2].port: Invalid value: 70000: must be between 1 and 65535",
		"spec.service.ports[2].name: Duplicate value: \"http\"",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
