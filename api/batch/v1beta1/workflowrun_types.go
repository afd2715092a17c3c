package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels and annotations of workflow objects.
const (
	// WorkflowTemplateLabel, on a run, names the WorkflowTemplate it runs.
	WorkflowTemplateLabel = "batch.tensorstack.dev/workflowTemplate"
	// WorkflowRunLabel, on what a run creates (pods, jobs, objects and the
	// runs of its DAG's nodes), names the run.
	WorkflowRunLabel = "batch.tensorstack.dev/workflowRun"
	// WorkflowRunNodeLabel, on the run of a DAG node, names the node.
	WorkflowRunNodeLabel = "batch.tensorstack.dev/dagNode"
	// CronWorkflowRunLabel, on a run a CronWorkflowRun started, names it.
	CronWorkflowRunLabel = "batch.tensorstack.dev/cronWorkflowRun"
	// RetryAnnotation retries a Failed or Error run from its failed nodes
	// each time its value changes: the nodes that succeeded are kept with
	// their results, the others run again.
	RetryAnnotation = "batch.tensorstack.dev/retry"
)

// MaxWorkflowRunDepth is the deepest a run may be nested in DAGs.
const MaxWorkflowRunDepth = 16

// MaxParamValueLength bounds a param's value and default, in bytes: room
// for a name, a URL, a small JSON document or a short script, while the
// values a template substitutes stay far from what one controller process
// could not hold. The CRD schema enforces it (the MaxLength markers of
// Param.Value and ParamSpec.Default), and a DAG fails a node whose
// substituted param would exceed it.
const MaxParamValueLength = 64 << 10

// NodePhase is the state of a run or of one node of a DAG.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed;Skipped;Error
type NodePhase string

// The node phases.
const (
	NodePending   NodePhase = "Pending"
	NodeRunning   NodePhase = "Running"
	NodeSucceeded NodePhase = "Succeeded"
	// NodeFailed is a run whose work failed.
	NodeFailed NodePhase = "Failed"
	// NodeSkipped is a DAG node whose when expressions did not hold, or
	// that the failure strategy did not start.
	NodeSkipped NodePhase = "Skipped"
	// NodeError is a run that could not run its work: a template that does
	// not exist, a param missing, an object the cluster refused.
	NodeError NodePhase = "Error"
)

// Done reports whether the phase is final.
func (p NodePhase) Done() bool {
	return p == NodeSucceeded || p == NodeFailed || p == NodeSkipped || p == NodeError
}

// WorkflowRunSpec is a run of a WorkflowTemplate: which one, with what
// params and workspaces.
// +kubebuilder:validation:XValidation:rule="has(self.workflowTemplateRef) != has(self.workflowTemplateSpec)",message="exactly one of spec.workflowTemplateRef and spec.workflowTemplateSpec is required"
type WorkflowRunSpec struct {
	// workflowTemplateRef names the WorkflowTemplate, in the run's namespace.
	// +optional
	WorkflowTemplateRef string `json:"workflowTemplateRef,omitempty"`
	// workflowTemplateSpec is the template itself.
	// +optional
	WorkflowTemplateSpec *WorkflowTemplateSpec `json:"workflowTemplateSpec,omitempty"`
	// params give values to the template's params.
	// +optional
	// +kubebuilder:validation:MaxItems=128
	Params []Param `json:"params,omitempty"`
	// workspaces bind the template's workspaces to volumes.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Workspaces []WorkspaceBinding `json:"workspaces,omitempty"`
	// serviceAccountName is the service account of the run's pods, and the
	// one a Resource template's object is created as (required there).
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// timeout fails the run once it has run this long (a Go duration such
	// as "1h30m"); unset means never.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// depth is how deep the run is nested in DAGs; the controller sets it
	// on the runs of DAG nodes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Depth int32 `json:"depth,omitempty"`
	// scheduler places the run's pods with the T9k Scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
}

// WorkspaceBinding binds a workspace to a volume: exactly one of
// persistentVolumeClaim, emptyDir, configMap and secret.
// +kubebuilder:validation:XValidation:rule="[has(self.persistentVolumeClaim), has(self.emptyDir), has(self.configMap), has(self.secret)].filter(x, x).size() == 1",message="a workspace binding needs exactly one of persistentVolumeClaim, emptyDir, configMap and secret"
type WorkspaceBinding struct {
	// name of the template's workspace.
	Name string `json:"name"`
	// subPath is a directory within the volume to mount instead of its root.
	// +optional
	SubPath string `json:"subPath,omitempty"`
	// persistentVolumeClaim in the run's namespace.
	// +optional
	PersistentVolumeClaim *corev1.PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty"`
	// emptyDir lives as long as the run's pod.
	// +optional
	EmptyDir *corev1.EmptyDirVolumeSource `json:"emptyDir,omitempty"`
	// configMap populates the workspace.
	// +optional
	ConfigMap *corev1.ConfigMapVolumeSource `json:"configMap,omitempty"`
	// secret populates the workspace.
	// +optional
	Secret *corev1.SecretVolumeSource `json:"secret,omitempty"`
}

// WorkflowRunConditionType names a condition of a run.
type WorkflowRunConditionType string

// The run conditions.
const (
	// WorkflowRunRunning is True while the run runs.
	WorkflowRunRunning WorkflowRunConditionType = "Running"
	// WorkflowRunCompleted is True once the run has finished, whatever
	// the phase.
	WorkflowRunCompleted WorkflowRunConditionType = "Completed"
)

// WorkflowRunCondition is one condition of a run.
type WorkflowRunCondition struct {
	// type of the condition: Running or Completed.
	Type WorkflowRunConditionType `json:"type"`
	// status: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// reason in CamelCase.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message for humans.
	// +optional
	Message string `json:"message,omitempty"`
	// lastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// NodeStatus is the state of one node of a DAG run.
type NodeStatus struct {
	// workflowRunName is the node's current run.
	// +optional
	WorkflowRunName string `json:"workflowRunName,omitempty"`
	// phase of the node.
	// +optional
	Phase NodePhase `json:"phase,omitempty"`
	// whenExpressions, substituted, show why a node was skipped.
	// +optional
	WhenExpressions []WhenExpression `json:"whenExpressions,omitempty"`
	// retries is how often the node has been run again.
	// +optional
	Retries int32 `json:"retries,omitempty"`
	// message says why a node failed or was skipped.
	// +optional
	Message string `json:"message,omitempty"`
}

// WorkflowRunResult is one result of a run.
type WorkflowRunResult struct {
	// name of the result.
	Name string `json:"name"`
	// value of the result.
	Value string `json:"value"`
}

// WorkflowRunStatusFields is the state of one attempt of a run.
type WorkflowRunStatusFields struct {
	// phase: Pending, Running, Succeeded, Failed, Skipped or Error.
	// +optional
	Phase NodePhase `json:"phase,omitempty"`
	// message says why the run is in its phase.
	// +optional
	Message string `json:"message,omitempty"`
	// nodes of a DAG run, by node name.
	// +optional
	Nodes map[string]NodeStatus `json:"nodes,omitempty"`
	// startTime is when the controller started the run.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the run finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// results are the template's results.
	// +optional
	Results []WorkflowRunResult `json:"results,omitempty"`
	// workflowTemplateSpec is the template the run runs, as resolved when it
	// started.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	WorkflowTemplateSpec *WorkflowTemplateSpec `json:"workflowTemplateSpec,omitempty"`
	// podName is the pod of a Pod or SeqPod run.
	// +optional
	PodName string `json:"podName,omitempty"`
	// resourceName is the object of a Resource or T9k Job run.
	// +optional
	ResourceName string `json:"resourceName,omitempty"`
	// conditions: Running and Completed.
	// +optional
	Conditions []WorkflowRunCondition `json:"conditions,omitempty"`
}

// WorkflowRunStatus is the state of a run and of its earlier attempts.
type WorkflowRunStatus struct {
	WorkflowRunStatusFields `json:",inline"`
	// retriedStatus are the states of earlier attempts, oldest first: the
	// run's own before each retry of the whole run, and each failed run of
	// a DAG node that was retried.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	RetriedStatus []RetriedStatus `json:"retriedStatus,omitempty"`
	// retry is the value of the retry annotation last acted on.
	// +optional
	Retry string `json:"retry,omitempty"`
}

// RetriedStatus records one earlier attempt: of the run itself, or of one of
// its DAG nodes where node is set.
type RetriedStatus struct {
	// node is the DAG node retried; empty for the run itself.
	// +optional
	Node string `json:"node,omitempty"`
	// workflowRunName is the run of the node's attempt.
	// +optional
	WorkflowRunName string `json:"workflowRunName,omitempty"`
	// phase the attempt ended in.
	// +optional
	Phase NodePhase `json:"phase,omitempty"`
	// message of the attempt.
	// +optional
	Message string `json:"message,omitempty"`
	// startTime is when the attempt started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the attempt ended.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=wr
// +kubebuilder:printcolumn:name="Template",type=string,JSONPath=`.spec.workflowTemplateRef`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// WorkflowRun runs a WorkflowTemplate once, with params and workspaces.
type WorkflowRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec WorkflowRunSpec `json:"spec"`
	// +optional
	Status WorkflowRunStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkflowRunList is a list of WorkflowRuns.
type WorkflowRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkflowRun `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &WorkflowRun{}, &WorkflowRunList{})
}
