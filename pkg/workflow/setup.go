// Package workflow is the WorkflowRun controller: it resolves a run's
// WorkflowTemplate, substitutes its variables, and runs it as a pod, a pod of
// sequential steps, an object, a T9k Job or a DAG of child runs; and the
// admission webhook of WorkflowTemplates, WorkflowRuns and CronWorkflowRuns.
package workflow

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// DefaultToolsImage is the image whose workflow-tools binary sequences the
// steps of SeqPod runs.
const DefaultToolsImage = "ghcr.io/accelstack/workflow-tools:latest"

// Options configures the controller.
type Options struct {
	// ToolsImage holds the step sequencer; empty means DefaultToolsImage.
	ToolsImage string
}

// Setup runs the WorkflowRun controller and the workflow webhook on mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	return nil
}
