package seqpod

import (
	"github.com/accelstack/accelstack/pkg/workflow/seqpod/sequencer"
)

// The reserved directories of a SeqPod pod.
const (
	// ToolsDir holds the step sequencer, the scripts and the steps' state.
	ToolsDir = sequencer.ToolsDir
	// ResultsDir holds the result files: $(results.<name>.path).
	ResultsDir = sequencer.ResultsDir
	// WorkspacesDir holds the default mount paths of the workspaces:
	// $(workspaces.<name>.path).
	WorkspacesDir = sequencer.WorkspacesDir
	// TerminationDir holds the steps' termination message.
	TerminationDir = sequencer.TerminationDir
	// TerminationMessagePath is the terminationMessagePath of every step.
	TerminationMessagePath = sequencer.TerminationMessagePath
)

// What BuildPodSpec adds to a pod; ValidateSteps keeps templates from
// using the names.
const (
	// ToolsVolume is the emptyDir at ToolsDir.
	ToolsVolume = "t9k-tools"
	// ResultsVolume is the emptyDir at ResultsDir.
	ResultsVolume = "t9k-results"
	// ToolsContainer is the init container that installs the sequencer.
	ToolsContainer = "workflow-tools"
)

// ToolsBinary is the sequencer in the pod, the command of every step.
const ToolsBinary = ToolsDir + "/" + sequencer.Binary

// ResultPath returns the file of a result, $(results.<name>.path).
func ResultPath(name string) string { return ResultsDir + "/" + name }

// WorkspacePath returns the default mount path of a workspace,
// $(workspaces.<name>.path) when its declaration gives none.
func WorkspacePath(name string) string { return WorkspacesDir + "/" + name }
