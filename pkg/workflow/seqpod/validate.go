package seqpod

import (
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// MaxScriptBytes is the most a step's script holds: base64-encoded in an
// environment variable it must stay under the kernel's 128 KiB limit on one.
const MaxScriptBytes = 64 << 10

// reservedDirs are the directories of the sequencer that steps must not
// mount anything at or under.
var reservedDirs = []string{ToolsDir, ResultsDir, TerminationDir}

// ValidateSteps checks the steps of a SeqPod template for the admission
// webhook; path is where the template is, e.g. spec.seqPod. At least one
// step; no containers besides the steps; step names unique DNS labels,
// distinct from the init containers' and ToolsContainer; each step with a
// command or a script but not both, the script at most MaxScriptBytes; no
// volume mount at or under ToolsDir, ResultsDir or TerminationDir; no
// volume or init container named as BuildPodSpec's. The rest of the pod
// spec is the API server's to check.
func ValidateSteps(t *batchv1beta1.SeqPodWorkflowTemplate, path *field.Path) field.ErrorList {
	if t == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	if len(t.Steps) == 0 {
		errs = append(errs, field.Required(path.Child("steps"), "at least one step is required"))
	}
	if len(t.Containers) > 0 {
		errs = append(errs, field.Forbidden(path.Child("containers"), "the containers of a SeqPod are its steps"))
	}
	initNames := map[string]bool{}
	for i, c := range t.InitContainers {
		if c.Name == ToolsContainer {
			errs = append(errs, field.Invalid(path.Child("initContainers").Index(i).Child("name"), c.Name, "is the name of the step sequencer's init container"))
		}
		initNames[c.Name] = true
	}
	for i, v := range t.Volumes {
		if v.Name == ToolsVolume || v.Name == ResultsVolume {
			errs = append(errs, field.Invalid(path.Child("volumes").Index(i).Child("name"), v.Name, "is the name of a volume of the step sequencer"))
		}
	}
	names := map[string]bool{}
	for i, s := range t.Steps {
		sp := path.Child("steps").Index(i)
		np := sp.Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(np, ""))
		case names[s.Name]:
			errs = append(errs, field.Duplicate(np, s.Name))
		case s.Name == ToolsContainer || initNames[s.Name]:
			errs = append(errs, field.Invalid(np, s.Name, "is the name of an init container"))
		default:
			for _, msg := range validation.IsDNS1123Label(s.Name) {
				errs = append(errs, field.Invalid(np, s.Name, msg))
			}
		}
		names[s.Name] = true

		switch {
		case s.Script != "" && len(s.Command) > 0:
			errs = append(errs, field.Forbidden(sp.Child("command"), "a step with a script takes no command: the script runs with the args as its arguments"))
		case s.Script == "" && len(s.Command) == 0:
			errs = append(errs, field.Required(sp.Child("command"), "a step needs a command or a script: the step sequencer runs it and cannot know the image's entrypoint"))
		}
		if len(s.Script) > MaxScriptBytes {
			errs = append(errs, field.TooLong(sp.Child("script"), "", MaxScriptBytes))
		}
		for j, m := range s.VolumeMounts {
			if dir := reservedDir(m.MountPath); dir != "" {
				errs = append(errs, field.Invalid(sp.Child("volumeMounts").Index(j).Child("mountPath"), m.MountPath, dir+" is reserved for the step sequencer"))
			}
		}
	}
	return errs
}

// reservedDir returns the reserved directory p is or lies under, or "".
func reservedDir(p string) string {
	p = path.Clean("/" + p)
	for _, d := range reservedDirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return d
		}
	}
	return ""
}
