package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkflowTemplateType names what a WorkflowTemplate runs.
// +kubebuilder:validation:Enum=Pod;SeqPod;Resource;DAG;GenericJob;TensorFlowTrainingJob;PyTorchTrainingJob;XGBoostTrainingJob;ColossalAIJob;DeepSpeedJob;MPIJob;BeamJob
type WorkflowTemplateType string

// The WorkflowTemplate types.
const (
	WorkflowTemplateTypePod                   WorkflowTemplateType = "Pod"
	WorkflowTemplateTypeSeqPod                WorkflowTemplateType = "SeqPod"
	WorkflowTemplateTypeResource              WorkflowTemplateType = "Resource"
	WorkflowTemplateTypeDAG                   WorkflowTemplateType = "DAG"
	WorkflowTemplateTypeGenericJob            WorkflowTemplateType = "GenericJob"
	WorkflowTemplateTypeTensorFlowTrainingJob WorkflowTemplateType = "TensorFlowTrainingJob"
	WorkflowTemplateTypePyTorchTrainingJob    WorkflowTemplateType = "PyTorchTrainingJob"
	WorkflowTemplateTypeXGBoostTrainingJob    WorkflowTemplateType = "XGBoostTrainingJob"
	WorkflowTemplateTypeColossalAIJob         WorkflowTemplateType = "ColossalAIJob"
	WorkflowTemplateTypeDeepSpeedJob          WorkflowTemplateType = "DeepSpeedJob"
	WorkflowTemplateTypeMPIJob                WorkflowTemplateType = "MPIJob"
	WorkflowTemplateTypeBeamJob               WorkflowTemplateType = "BeamJob"
)

// WorkflowTemplateSpec is what a WorkflowTemplate runs and the params,
// workspaces and results it declares. Exactly one of pod, seqPod, resource,
// dag and the T9k Job fields is set; it must agree with type. The pod
// specs and job specs are checked by the admission webhook rather than the
// CRD schema, which would otherwise hold a pod schema per field.
type WorkflowTemplateSpec struct {
	// description says what the template does. Null, as YAML reads a
	// description left empty, is empty.
	// +optional
	// +nullable
	Description string `json:"description,omitempty"`
	// type is what the template runs; empty means the first of pod, seqPod,
	// resource and dag that is set.
	// +optional
	Type WorkflowTemplateType `json:"type,omitempty"`
	// params are the inputs, referenced as $(params.<name>); one without a
	// default must be given by the run.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Params []ParamSpec `json:"params,omitempty"`
	// workspaces are the volumes the template needs, referenced as
	// $(workspaces.<name>.path); the run binds them.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Workspaces []WorkspaceDeclaration `json:"workspaces,omitempty"`
	// results are the strings the template outputs (SeqPod and DAG): a
	// SeqPod step writes each to $(results.<name>.path); a DAG combines its
	// nodes' results in value. All together they hold at most 4096 bytes.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Results []Result `json:"results,omitempty"`

	// pod is the spec of the pod the template runs once.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Pod *PodWorkflowTemplate `json:"pod,omitempty"`
	// seqPod is a pod whose steps run one after another.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	SeqPod *SeqPodWorkflowTemplate `json:"seqPod,omitempty"`
	// resource creates any object and watches it until it meets its rules.
	// +optional
	Resource *ResourceWorkflowTemplate `json:"resource,omitempty"`
	// dag runs other WorkflowTemplates in the order of their dependencies.
	// +optional
	DAG *DAGWorkflowTemplate `json:"dag,omitempty"`

	// genericJob runs a GenericJob.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	GenericJob *GenericJobWorkflowTemplate `json:"genericJob,omitempty"`
	// tensorflowTrainingJob runs a TensorFlowTrainingJob.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	TensorFlowTrainingJob *TensorFlowTrainingJobWorkflowTemplate `json:"tensorflowTrainingJob,omitempty"`
	// pytorchTrainingJob runs a PyTorchTrainingJob.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	PyTorchTrainingJob *PyTorchTrainingJobWorkflowTemplate `json:"pytorchTrainingJob,omitempty"`
	// xgboostTrainingJob runs an XGBoostTrainingJob.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	XGBoostTrainingJob *XGBoostTrainingJobWorkflowTemplate `json:"xgboostTrainingJob,omitempty"`
	// colossalaiJob runs a ColossalAIJob.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	ColossalAIJob *ColossalAIJobWorkflowTemplate `json:"colossalaiJob,omitempty"`
	// deepspeedJob runs a DeepSpeedJob.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	DeepSpeedJob *DeepSpeedJobWorkflowTemplate `json:"deepspeedJob,omitempty"`
	// mpiJob runs an MPIJob.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	MPIJob *MPIJobWorkflowTemplate `json:"mpiJob,omitempty"`
	// beamJob runs a BeamJob.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	BeamJob *BeamJobWorkflowTemplate `json:"beamJob,omitempty"`
}

// ParamSpec declares an input of a WorkflowTemplate.
type ParamSpec struct {
	// name is how the param is referenced: $(params.<name>).
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][-A-Za-z0-9_.]*$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// description says what the param is for. Null, as YAML reads a
	// description left empty, is empty.
	// +optional
	// +nullable
	Description string `json:"description,omitempty"`
	// default is the value when the run gives none; a param without one is
	// required. An empty string is a default. At most 64 KiB
	// (MaxParamValueLength).
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	Default *string `json:"default,omitempty"`
}

// WorkspaceDeclaration declares a volume a WorkflowTemplate needs.
type WorkspaceDeclaration struct {
	// name is how the workspace is bound and referenced:
	// $(workspaces.<name>.path).
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][-A-Za-z0-9_.]*$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// description says what the workspace holds. Null, as YAML reads a
	// description left empty, is empty.
	// +optional
	// +nullable
	Description string `json:"description,omitempty"`
	// mountPath is where the containers see it; empty means
	// /t9k/workspaces/<name>.
	// +optional
	MountPath string `json:"mountPath,omitempty"`
	// readOnly mounts it read-only.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`
	// optional lets a run leave it unbound.
	// +optional
	Optional bool `json:"optional,omitempty"`
}

// Result declares an output of a WorkflowTemplate.
type Result struct {
	// name is how the result is referenced: $(results.<name>.path) in the
	// template, $(templates.<node>.results.<name>) in a DAG.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][-A-Za-z0-9_.]*$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// description says what the result means. Null, as YAML reads a
	// description left empty, is empty.
	// +optional
	// +nullable
	Description string `json:"description,omitempty"`
	// value combines the DAG nodes' results, e.g.
	// "$(templates.train.results.accuracy)"; DAG templates only.
	// +optional
	Value string `json:"value,omitempty"`
}

// PodWorkflowTemplate is the spec of the pod a Pod template runs. Its
// restartPolicy is always Never: a run is one attempt.
type PodWorkflowTemplate struct {
	corev1.PodSpec `json:",inline"`
}

// SeqPodWorkflowTemplate is a pod whose steps, one container each, run one
// after another; a failed step stops the rest. Besides steps it takes every
// field of a pod spec but containers.
type SeqPodWorkflowTemplate struct {
	// steps run in order.
	Steps []Step `json:"steps"`
	// The other fields of the pod; containers must be empty.
	corev1.PodSpec `json:",inline"`
}

// Step is one container of a SeqPod template, with an optional script.
type Step struct {
	corev1.Container `json:",inline"`
	// script is run instead of command, with args as its arguments. Without
	// a "#!" line it runs under "#!/bin/bash" with "set -e".
	// +optional
	Script string `json:"script,omitempty"`
}

// ResourceWorkflowTemplate creates an object and waits until it meets its
// success or failure rules.
type ResourceWorkflowTemplate struct {
	// manifest is the object, in YAML or JSON; it is created in the run's
	// namespace with the run's service account's permissions.
	// +kubebuilder:validation:MinLength=1
	Manifest string `json:"manifest"`
	// successRules say when the object has succeeded; filled in for T9k Jobs.
	// +optional
	SuccessRules *Rules `json:"successRules,omitempty"`
	// failureRules say when the object has failed; filled in for T9k Jobs.
	// +optional
	FailureRules *Rules `json:"failureRules,omitempty"`
}

// Rules describe a state of an object; both selectors, where set, must match.
type Rules struct {
	// fieldSelector compares fields of the object: comma-separated
	// requirements "<path> <op> <value>" with the operators ==, =, !=, >,
	// <, in (a, b) and notin (a, b), e.g. "status.succeeded > 0".
	// +optional
	FieldSelector string `json:"fieldSelector,omitempty"`
	// conditionSelector matches a condition in status.conditions.
	// +optional
	ConditionSelector *ConditionSelector `json:"conditionSelector,omitempty"`
}

// ConditionSelector matches an object with a condition of this type and status.
type ConditionSelector struct {
	// type of the condition.
	Type string `json:"type"`
	// status of the condition: True, False or Unknown.
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status corev1.ConditionStatus `json:"status"`
}

// FailureStrategy says what a DAG does once a node has failed for good.
// +kubebuilder:validation:Enum=StopAllWorkflowTemplates;StopDependentWorkflowTemplates
type FailureStrategy string

// The DAG failure strategies.
const (
	// StopAllWorkflowTemplates starts no more nodes.
	StopAllWorkflowTemplates FailureStrategy = "StopAllWorkflowTemplates"
	// StopDependentWorkflowTemplates starts no node that depends on a
	// failed one; other branches go on.
	StopDependentWorkflowTemplates FailureStrategy = "StopDependentWorkflowTemplates"
)

// DAGWorkflowTemplate runs WorkflowTemplates as nodes of a directed acyclic
// graph: a node starts once the nodes it depends on have succeeded.
type DAGWorkflowTemplate struct {
	// templates are the nodes.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	Templates []DAGNode `json:"templates"`
	// failureStrategy: StopAllWorkflowTemplates (the default) or
	// StopDependentWorkflowTemplates. Running nodes always finish.
	// +optional
	// +kubebuilder:default=StopAllWorkflowTemplates
	FailureStrategy FailureStrategy `json:"failureStrategy,omitempty"`
}

// DAGNode is one node of a DAG.
type DAGNode struct {
	// name is the node's name in the DAG.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// workflowTemplateRef names the WorkflowTemplate the node runs, in the
	// DAG's namespace.
	WorkflowTemplateRef string `json:"workflowTemplateRef"`
	// when must all hold for the node to run; otherwise it is Skipped.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	When []WhenExpression `json:"when,omitempty"`
	// retries is how often a failed node is run again.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Retries int32 `json:"retries,omitempty"`
	// dependencies are the nodes that must succeed before this one starts.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	Dependencies []string `json:"dependencies,omitempty"`
	// params are given to the node's template.
	// +optional
	// +kubebuilder:validation:MaxItems=128
	Params []Param `json:"params,omitempty"`
	// workspaces bind the node's workspaces to the DAG's.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Workspaces []WorkspaceDAGBinding `json:"workspaces,omitempty"`
}

// WhenOperator relates a when expression's input to its values.
// +kubebuilder:validation:Enum=in;notin
type WhenOperator string

// The when operators.
const (
	WhenIn    WhenOperator = "in"
	WhenNotIn WhenOperator = "notin"
)

// WhenExpression is a guard of a DAG node.
type WhenExpression struct {
	// input is compared with values; variables are substituted, and an
	// empty input is "".
	// +optional
	Input string `json:"input,omitempty"`
	// operator: in or notin.
	Operator WhenOperator `json:"operator"`
	// values are what input is compared with.
	// +kubebuilder:validation:MinItems=1
	Values []string `json:"values"`
}

// Param gives a value to a param.
type Param struct {
	// name of the param.
	Name string `json:"name"`
	// value of the param; variables are substituted. At most 64 KiB
	// (MaxParamValueLength).
	// +kubebuilder:validation:MaxLength=65536
	Value string `json:"value"`
}

// WorkspaceDAGBinding binds a node's workspace to one of the DAG's.
type WorkspaceDAGBinding struct {
	// name of the node's workspace.
	Name string `json:"name"`
	// workspace is the DAG's workspace it is bound to.
	Workspace string `json:"workspace"`
	// subPath is a directory within the DAG's workspace.
	// +optional
	SubPath string `json:"subPath,omitempty"`
}

// GenericJobWorkflowTemplate is the metadata and spec of a GenericJob a template runs.
type GenericJobWorkflowTemplate struct {
	// metadata of the job: labels and annotations; the run names it.
	// +optional
	Metadata metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec of the job.
	Spec GenericJobSpec `json:"spec"`
}

// TensorFlowTrainingJobWorkflowTemplate is the metadata and spec of a TensorFlowTrainingJob a template runs.
type TensorFlowTrainingJobWorkflowTemplate struct {
	// metadata of the job: labels and annotations; the run names it.
	// +optional
	Metadata metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec of the job.
	Spec TensorFlowTrainingJobSpec `json:"spec"`
}

// PyTorchTrainingJobWorkflowTemplate is the metadata and spec of a PyTorchTrainingJob a template runs.
type PyTorchTrainingJobWorkflowTemplate struct {
	// metadata of the job: labels and annotations; the run names it.
	// +optional
	Metadata metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec of the job.
	Spec PyTorchTrainingJobSpec `json:"spec"`
}

// XGBoostTrainingJobWorkflowTemplate is the metadata and spec of an XGBoostTrainingJob a template runs.
type XGBoostTrainingJobWorkflowTemplate struct {
	// metadata of the job: labels and annotations; the run names it.
	// +optional
	Metadata metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec of the job.
	Spec XGBoostTrainingJobSpec `json:"spec"`
}

// ColossalAIJobWorkflowTemplate is the metadata and spec of a ColossalAIJob a template runs.
type ColossalAIJobWorkflowTemplate struct {
	// metadata of the job: labels and annotations; the run names it.
	// +optional
	Metadata metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec of the job.
	Spec ColossalAIJobSpec `json:"spec"`
}

// DeepSpeedJobWorkflowTemplate is the metadata and spec of a DeepSpeedJob a template runs.
type DeepSpeedJobWorkflowTemplate struct {
	// metadata of the job: labels and annotations; the run names it.
	// +optional
	Metadata metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec of the job.
	Spec DeepSpeedJobSpec `json:"spec"`
}

// MPIJobWorkflowTemplate is the metadata and spec of an MPIJob a template runs.
type MPIJobWorkflowTemplate struct {
	// metadata of the job: labels and annotations; the run names it.
	// +optional
	Metadata metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec of the job.
	Spec MPIJobSpec `json:"spec"`
}

// BeamJobWorkflowTemplate is the metadata and spec of a BeamJob a template runs.
type BeamJobWorkflowTemplate struct {
	// metadata of the job: labels and annotations; the run names it.
	// +optional
	Metadata metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec of the job.
	Spec BeamJobSpec `json:"spec"`
}

// WorkflowTemplateStatus is empty: a template is only a definition.
type WorkflowTemplateStatus struct{}

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=wt
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=`.spec.description`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// WorkflowTemplate is a reusable unit of work: a pod, a sequence of steps, an
// object, a T9k Job or a DAG of other templates. WorkflowRuns run it.
type WorkflowTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec WorkflowTemplateSpec `json:"spec"`
	// +optional
	Status WorkflowTemplateStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkflowTemplateList is a list of WorkflowTemplates.
type WorkflowTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkflowTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &WorkflowTemplate{}, &WorkflowTemplateList{})
}
