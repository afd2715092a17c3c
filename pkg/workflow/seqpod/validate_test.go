package seqpod

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

func TestValidateSteps(t *testing.T) {
	path := field.NewPath("spec", "seqPod")
	steps := path.Child("steps")
	cmd := func(name string) batchv1beta1.Step {
		return batchv1beta1.Step{Container: corev1.Container{Name: name, Image: "ubuntu", Command: []string{"true"}}}
	}
	script := func(name, s string) batchv1beta1.Step {
		return batchv1beta1.Step{Container: corev1.Container{Name: name, Image: "ubuntu"}, Script: s}
	}
	mount := func(s batchv1beta1.Step, paths ...string) batchv1beta1.Step {
		for _, p := range paths {
			s.VolumeMounts = append(s.VolumeMounts, corev1.VolumeMount{Name: "v", MountPath: p})
		}
		return s
	}
	seq := func(s ...batchv1beta1.Step) *batchv1beta1.SeqPodWorkflowTemplate {
		return &batchv1beta1.SeqPodWorkflowTemplate{Steps: s}
	}
	testCases := []struct {
		name string
		tmpl *batchv1beta1.SeqPodWorkflowTemplate
		want field.ErrorList
	}{
		{name: "valid", tmpl: seq(cmd("a"), script("b", "echo hi"), mount(cmd("c"), "/t9k/workspaces/data", "/t9k", "/t9k/toolsx", "/data"))},
		{name: "nil", tmpl: nil, want: field.ErrorList{field.Required(path, "")}},
		{name: "no steps", tmpl: seq(), want: field.ErrorList{field.Required(steps, "at least one step is required")}},
		{
			name: "containers",
			tmpl: &batchv1beta1.SeqPodWorkflowTemplate{Steps: []batchv1beta1.Step{cmd("a")}, PodSpec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x"}}}},
			want: field.ErrorList{field.Forbidden(path.Child("containers"), "the containers of a SeqPod are its steps")},
		},
		{
			name: "names",
			tmpl: seq(cmd("a"), cmd("a"), cmd(""), cmd("Bad_Name"), cmd("workflow-tools")),
			want: field.ErrorList{
				field.Duplicate(steps.Index(1).Child("name"), "a"),
				field.Required(steps.Index(2).Child("name"), ""),
				field.Invalid(steps.Index(3).Child("name"), "Bad_Name", validation.IsDNS1123Label("Bad_Name")[0]),
				field.Invalid(steps.Index(4).Child("name"), "workflow-tools", "is the name of an init container"),
			},
		},
		{
			name: "step named as an init container",
			tmpl: &batchv1beta1.SeqPodWorkflowTemplate{Steps: []batchv1beta1.Step{cmd("prepare")}, PodSpec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "prepare"}, {Name: "workflow-tools"}},
			}},
			want: field.ErrorList{
				field.Invalid(path.Child("initContainers").Index(1).Child("name"), "workflow-tools", "is the name of the step sequencer's init container"),
				field.Invalid(steps.Index(0).Child("name"), "prepare", "is the name of an init container"),
			},
		},
		{
			name: "script and command",
			tmpl: seq(batchv1beta1.Step{Container: corev1.Container{Name: "a", Command: []string{"sh"}}, Script: "echo"}),
			want: field.ErrorList{field.Forbidden(steps.Index(0).Child("command"), "a step with a script takes no command: the script runs with the args as its arguments")},
		},
		{
			name: "neither script nor command",
			tmpl: seq(batchv1beta1.Step{Container: corev1.Container{Name: "a", Image: "ubuntu", Args: []string{"x"}}}),
			want: field.ErrorList{field.Required(steps.Index(0).Child("command"), "a step needs a command or a script: the step sequencer runs it and cannot know the image's entrypoint")},
		},
		{
			name: "script too long",
			tmpl: seq(script("a", strings.Repeat("x", MaxScriptBytes)), script("b", strings.Repeat("x", MaxScriptBytes+1))),
			want: field.ErrorList{field.TooLong(steps.Index(1).Child("script"), "", MaxScriptBytes)},
		},
		{
			name: "reserved mounts",
			tmpl: seq(mount(cmd("a"), "/t9k/tools", "/t9k/results/x", "/t9k/termination/", "/t9k//tools/../results")),
			want: field.ErrorList{
				field.Invalid(steps.Index(0).Child("volumeMounts").Index(0).Child("mountPath"), "/t9k/tools", "/t9k/tools is reserved for the step sequencer"),
				field.Invalid(steps.Index(0).Child("volumeMounts").Index(1).Child("mountPath"), "/t9k/results/x", "/t9k/results is reserved for the step sequencer"),
				field.Invalid(steps.Index(0).Child("volumeMounts").Index(2).Child("mountPath"), "/t9k/termination/", "/t9k/termination is reserved for the step sequencer"),
				field.Invalid(steps.Index(0).Child("volumeMounts").Index(3).Child("mountPath"), "/t9k//tools/../results", "/t9k/results is reserved for the step sequencer"),
			},
		},
		{
			name: "reserved volume names",
			tmpl: &batchv1beta1.SeqPodWorkflowTemplate{Steps: []batchv1beta1.Step{cmd("a")}, PodSpec: corev1.PodSpec{
				Volumes: []corev1.Volume{{Name: "t9k-tools"}, {Name: "ok"}, {Name: "t9k-results"}},
			}},
			want: field.ErrorList{
				field.Invalid(path.Child("volumes").Index(0).Child("name"), "t9k-tools", "is the name of a volume of the step sequencer"),
				field.Invalid(path.Child("volumes").Index(2).Child("name"), "t9k-results", "is the name of a volume of the step sequencer"),
			},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got := ValidateSteps(tc.tmpl, path)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateSteps (-want +got):\n%s", diff)
			}
		})
	}
}
