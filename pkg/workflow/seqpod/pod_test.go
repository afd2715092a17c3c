package seqpod

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

const toolsImage = "ghcr.io/accelstack/workflow-tools:latest"

// template is the seed's add-workflowtemplate after substitution, with a
// script step before it and a step that mounts a workspace after.
func template() *batchv1beta1.SeqPodWorkflowTemplate {
	limits := corev1.ResourceRequirements{Limits: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100m"),
		corev1.ResourceMemory: resource.MustParse("100Mi"),
	}}
	return &batchv1beta1.SeqPodWorkflowTemplate{
		Steps: []batchv1beta1.Step{
			{
				Container: corev1.Container{Name: "hello", Image: "python", Resources: limits, Args: []string{"a b"}},
				Script:    "print('Hello from Python!')\necho $$ $(OP1)\n",
			},
			{
				Container: corev1.Container{
					Name: "add", Image: "ubuntu", Resources: limits,
					Env:     []corev1.EnvVar{{Name: "OP1", Value: "1"}, {Name: "OP2", Value: "2"}},
					Command: []string{"/bin/sh", "-c"},
					Args:    []string{"echo -n $((${OP1}+${OP2})) | tee /t9k/results/sum;"},
					// Overridden: the sequencer owns the termination message.
					TerminationMessagePath:   "/dev/termination-log",
					TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				},
			},
			{
				Container: corev1.Container{
					Name: "save", Image: "busybox", Command: []string{"cp"}, Args: []string{"/t9k/results/sum", "/t9k/workspaces/data/"},
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/t9k/workspaces/data"}},
				},
			},
		},
		PodSpec: corev1.PodSpec{
			RestartPolicy:      corev1.RestartPolicyOnFailure,
			ServiceAccountName: "managed-project-sa",
			NodeSelector:       map[string]string{"gpu": "a100"},
			InitContainers:     []corev1.Container{{Name: "prepare", Image: "busybox", Command: []string{"true"}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"},
			}}},
		},
	}
}

func TestBuildPodSpec(t *testing.T) {
	tmpl := template()
	orig := tmpl.DeepCopy()
	results := []batchv1beta1.Result{{Name: "sum", Description: "the sum"}, {Name: "my.status"}}
	got, err := BuildPodSpec(tmpl, toolsImage, results)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(orig, tmpl); diff != "" {
		t.Errorf("BuildPodSpec modified the template (-before +after):\n%s", diff)
	}

	mounts := func(own ...corev1.VolumeMount) []corev1.VolumeMount {
		return append(own,
			corev1.VolumeMount{Name: "t9k-tools", MountPath: "/t9k/tools"},
			corev1.VolumeMount{Name: "t9k-results", MountPath: "/t9k/results"})
	}
	step := func(c corev1.Container) corev1.Container {
		c.TerminationMessagePath = "/t9k/termination/message"
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
		c.VolumeMounts = mounts(c.VolumeMounts...)
		return c
	}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	want := corev1.PodSpec{
		RestartPolicy:      corev1.RestartPolicyNever,
		ServiceAccountName: "managed-project-sa",
		NodeSelector:       map[string]string{"gpu": "a100"},
		Volumes: []corev1.Volume{
			{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			{Name: "t9k-tools", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "t9k-results", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
		InitContainers: []corev1.Container{
			{
				Name:  "workflow-tools",
				Image: toolsImage,
				Args:  []string{"install", "/t9k/tools"},
				Env: []corev1.EnvVar{{
					Name:  "WORKFLOW_TOOLS_SCRIPT_0",
					Value: base64.StdEncoding.EncodeToString([]byte("print('Hello from Python!')\necho $$ $(OP1)\n")),
				}},
				VolumeMounts:             []corev1.VolumeMount{{Name: "t9k-tools", MountPath: "/t9k/tools"}},
				Resources:                corev1.ResourceRequirements{Requests: res, Limits: res},
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
			},
			{Name: "prepare", Image: "busybox", Command: []string{"true"}},
		},
		Containers: []corev1.Container{
			step(corev1.Container{
				Name: "hello", Image: "python", Resources: orig.Steps[0].Resources,
				Command: []string{"/t9k/tools/workflow-tools"},
				Args: []string{"run", "--step", "0", "--steps", "3", "--result", "sum", "--result", "my.status",
					"--script", "/t9k/tools/scripts/0", "--", "a b"},
			}),
			step(corev1.Container{
				Name: "add", Image: "ubuntu", Resources: orig.Steps[1].Resources, Env: orig.Steps[1].Env,
				Command: []string{"/t9k/tools/workflow-tools"},
				Args: []string{"run", "--step", "1", "--steps", "3", "--result", "sum", "--result", "my.status",
					"--", "/bin/sh", "-c", "echo -n $((${OP1}+${OP2})) | tee /t9k/results/sum;"},
			}),
			step(corev1.Container{
				Name: "save", Image: "busybox",
				Command: []string{"/t9k/tools/workflow-tools"},
				Args: []string{"run", "--step", "2", "--steps", "3", "--result", "sum", "--result", "my.status",
					"--", "cp", "/t9k/results/sum", "/t9k/workspaces/data/"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/t9k/workspaces/data"}},
			}),
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BuildPodSpec (-want +got):\n%s", diff)
	}
}

func TestBuildPodSpecNoResultsNoScripts(t *testing.T) {
	tmpl := &batchv1beta1.SeqPodWorkflowTemplate{Steps: []batchv1beta1.Step{
		{Container: corev1.Container{Name: "only", Image: "ubuntu", Command: []string{"echo"}, Args: []string{"hi"}}},
	}}
	got, err := BuildPodSpec(tmpl, toolsImage, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"run", "--step", "0", "--steps", "1", "--", "echo", "hi"}, got.Containers[0].Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if env := got.InitContainers[0].Env; env != nil {
		t.Errorf("init container env %v, want none without scripts", env)
	}
	if got.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q", got.RestartPolicy)
	}
}

func TestBuildPodSpecErrors(t *testing.T) {
	valid := &batchv1beta1.SeqPodWorkflowTemplate{Steps: []batchv1beta1.Step{
		{Container: corev1.Container{Name: "a", Image: "ubuntu", Command: []string{"true"}}},
	}}
	testCases := []struct {
		name    string
		tmpl    *batchv1beta1.SeqPodWorkflowTemplate
		image   string
		results []batchv1beta1.Result
		wantErr string
	}{
		{name: "nil template", tmpl: nil, image: toolsImage, wantErr: "seqPod: Required value"},
		{name: "invalid steps", tmpl: &batchv1beta1.SeqPodWorkflowTemplate{}, image: toolsImage, wantErr: "seqPod.steps: Required value"},
		{name: "no image", tmpl: valid, wantErr: "no image of the step sequencer"},
		{name: "bad result name", tmpl: valid, image: toolsImage, results: []batchv1beta1.Result{{Name: "../x"}}, wantErr: `invalid result name "../x"`},
		{name: "result name with a dollar", tmpl: valid, image: toolsImage, results: []batchv1beta1.Result{{Name: "$(x)"}}, wantErr: "invalid result name"},
		{name: "empty result name", tmpl: valid, image: toolsImage, results: []batchv1beta1.Result{{Name: ""}}, wantErr: "invalid result name"},
		{name: "result declared twice", tmpl: valid, image: toolsImage, results: []batchv1beta1.Result{{Name: "x"}, {Name: "x"}}, wantErr: `result "x" is declared twice`},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildPodSpec(tc.tmpl, tc.image, tc.results)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("BuildPodSpec = %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	for got, want := range map[string]string{
		ResultPath("sum"):      "/t9k/results/sum",
		WorkspacePath("data"):  "/t9k/workspaces/data",
		ToolsBinary:            "/t9k/tools/workflow-tools",
		TerminationMessagePath: "/t9k/termination/message",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
