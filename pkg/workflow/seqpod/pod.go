package seqpod

import (
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/workflow/seqpod/sequencer"
)

// resultName is the pattern of a result's name (batchv1beta1.Result).
var resultName = regexp.MustCompile(`^[A-Za-z0-9_][-A-Za-z0-9_.]*$`)

// toolsResources are the requests and limits of the init container: it
// copies a 4 MB binary and a few scripts. Limits too, for namespaces whose
// quota requires them.
var toolsResources = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("100m"),
	corev1.ResourceMemory: resource.MustParse("64Mi"),
}

// BuildPodSpec returns the spec of the pod that runs the steps of t one
// after another: t's pod fields with restartPolicy Never, the steps as
// containers in order, each run through the step sequencer, the sequencer's
// init container of toolsImage first among the init containers, and the
// tools and results emptyDirs; see the package documentation. results are
// the template's declared results, which the last or failed step reports.
// The caller substitutes variables in t before, and adds the workspaces'
// volumes and mounts before or after; t is not modified. An invalid t
// (ValidateSteps) or result name is an error.
func BuildPodSpec(t *batchv1beta1.SeqPodWorkflowTemplate, toolsImage string, results []batchv1beta1.Result) (corev1.PodSpec, error) {
	if errs := ValidateSteps(t, field.NewPath("seqPod")); len(errs) > 0 {
		return corev1.PodSpec{}, errs.ToAggregate()
	}
	if toolsImage == "" {
		return corev1.PodSpec{}, errors.New("no image of the step sequencer")
	}
	seen := map[string]bool{}
	for _, r := range results {
		if !resultName.MatchString(r.Name) || len(r.Name) > 63 {
			return corev1.PodSpec{}, fmt.Errorf("invalid result name %q", r.Name)
		}
		if seen[r.Name] {
			return corev1.PodSpec{}, fmt.Errorf("result %q is declared twice", r.Name)
		}
		seen[r.Name] = true
	}

	spec := *t.PodSpec.DeepCopy()
	spec.RestartPolicy = corev1.RestartPolicyNever
	spec.Volumes = append(spec.Volumes,
		corev1.Volume{Name: ToolsVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: ResultsVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	)
	spec.InitContainers = append([]corev1.Container{toolsContainer(t, toolsImage)}, spec.InitContainers...)

	n := strconv.Itoa(len(t.Steps))
	spec.Containers = make([]corev1.Container, len(t.Steps))
	for i, s := range t.Steps {
		c := *s.Container.DeepCopy()
		args := []string{"run", "--step", strconv.Itoa(i), "--steps", n}
		for _, r := range results {
			args = append(args, "--result", r.Name)
		}
		if s.Script != "" {
			args = append(args, "--script", sequencer.ScriptPath(ToolsDir, i), "--")
		} else {
			args = append(append(args, "--"), c.Command...)
		}
		c.Command = []string{ToolsBinary}
		c.Args = append(args, c.Args...)
		c.TerminationMessagePath = TerminationMessagePath
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
		c.VolumeMounts = append(c.VolumeMounts,
			corev1.VolumeMount{Name: ToolsVolume, MountPath: ToolsDir},
			corev1.VolumeMount{Name: ResultsVolume, MountPath: ResultsDir},
		)
		spec.Containers[i] = c
	}
	return spec, nil
}

// toolsContainer returns the init container that installs the sequencer and
// the scripts of t's steps. It runs as the pod's user (the emptyDir is
// world-writable) with no privileges, as a restricted namespace requires.
func toolsContainer(t *batchv1beta1.SeqPodWorkflowTemplate, image string) corev1.Container {
	c := corev1.Container{
		Name:                     ToolsContainer,
		Image:                    image,
		Args:                     []string{"install", ToolsDir},
		VolumeMounts:             []corev1.VolumeMount{{Name: ToolsVolume, MountPath: ToolsDir}},
		Resources:                corev1.ResourceRequirements{Requests: toolsResources.DeepCopy(), Limits: toolsResources.DeepCopy()},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
	for i, s := range t.Steps {
		if s.Script == "" {
			continue
		}
		c.Env = append(c.Env, corev1.EnvVar{
			Name:  sequencer.ScriptEnvPrefix + strconv.Itoa(i),
			Value: base64.StdEncoding.EncodeToString([]byte(s.Script)),
		})
	}
	return c
}
