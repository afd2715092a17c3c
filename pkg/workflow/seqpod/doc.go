// Package seqpod is the controller side of SeqPod WorkflowTemplates: it
// validates their steps, builds the pod that runs the steps one after
// another through the step sequencer workflow-tools (package sequencer, which
// describes the protocol between the two), and reads the pod's outcome and
// results.
//
// The pod BuildPodSpec returns has, besides the template's pod fields:
//
//   - an emptyDir volume ToolsVolume at ToolsDir (/t9k/tools) and one,
//     ResultsVolume, at ResultsDir (/t9k/results), mounted in every step;
//   - a first init container, ToolsContainer, of the workflow-tools image,
//     that runs "install /t9k/tools" and writes the steps' scripts, which it
//     gets base64-encoded in the environment variables
//     WORKFLOW_TOOLS_SCRIPT_<i>;
//   - one container per step, in order, whose command is
//     "/t9k/tools/workflow-tools run --step i --steps N [--result NAME]...
//     [--script /t9k/tools/scripts/i] -- COMMAND... ARGS..." and whose
//     termination message goes to TerminationMessagePath with the policy
//     File (a log tail instead would read as results);
//   - restartPolicy Never.
//
// A step's command and args keep their meaning, the kubelet's $(VAR)
// expansion included; a step needs a command or a script, since the
// sequencer cannot know an image's entrypoint.
package seqpod
