package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NotebookType is the kind of notebook server a Notebook runs.
// +kubebuilder:validation:Enum=jupyter;rstudio
type NotebookType string

// The notebook types.
const (
	NotebookJupyter NotebookType = "jupyter"
	// NotebookRStudio notebooks are never reclaimed as idle.
	NotebookRStudio NotebookType = "rstudio"
)

// NotebookContainer is the name of a Notebook's main container. A
// template without a container of that name runs its first container as
// the main one (MainContainer).
const NotebookContainer = "notebook"

// NotebookRunMode is the platform's older way to suspend a Notebook:
// running or suspended.
// +kubebuilder:validation:Enum=running;suspended
type NotebookRunMode string

// The run modes.
const (
	NotebookRunModeRunning   NotebookRunMode = "running"
	NotebookRunModeSuspended NotebookRunMode = "suspended"
)

// NotebookTemplateSpec is the pod template of a Notebook.
type NotebookTemplateSpec struct {
	// spec of the notebook pod; its container named notebook, or its first
	// container when none has that name, serves the notebook's HTTP entry
	// on port 8888 (8787 for RStudio).
	Spec corev1.PodSpec `json:"spec"`
}

// NotebookSSHSpec configures the SSH Service of a Notebook.
type NotebookSSHSpec struct {
	// enabled creates a Service for SSH to the notebook container (port 22).
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// serviceType of the SSH Service: ClusterIP (default) or NodePort.
	// +optional
	// +kubebuilder:validation:Enum=ClusterIP;NodePort
	ServiceType corev1.ServiceType `json:"serviceType,omitempty"`
	// authorized_keys names Secrets of type tensorstack.dev/ssh (label
	// tensorstack.dev/resource: ssh) holding public keys allowed to log in;
	// key authentication only.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	AuthorizedKeys []string `json:"authorized_keys,omitempty"`
}

// NotebookSpec is the desired state of a Notebook.
type NotebookSpec struct {
	// template of the notebook pod.
	Template NotebookTemplateSpec `json:"template"`
	// scheduler places the pod with the T9k Scheduler.
	// +optional
	Scheduler *SchedulePolicy `json:"scheduler,omitempty"`
	// ssh configures SSH access.
	// +optional
	SSH *NotebookSSHSpec `json:"ssh,omitempty"`
	// type of notebook server: jupyter (default) or rstudio.
	// +optional
	// +kubebuilder:default=jupyter
	Type NotebookType `json:"type,omitempty"`
	// suspend deletes the notebook's pod while true, keeping its Services
	// and ConfigMaps for when it resumes. Defaults to false. The notebook
	// is suspended while suspend is true or runMode is suspended, so that
	// either way of suspending it (and the Resource Keeper's, which sets
	// suspend) holds; it runs only once neither does.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// runMode is the platform's older field for suspend: running (the
	// default) or suspended. See suspend for how the two combine.
	// +optional
	RunMode NotebookRunMode `json:"runMode,omitempty"`
}

// Suspended reports whether the notebook's pod is to be deleted: spec.suspend
// is true or spec.runMode is suspended.
func (s *NotebookSpec) Suspended() bool {
	return s.Suspend || s.RunMode == NotebookRunModeSuspended
}

// MainContainer returns the name of the container that runs the notebook
// server: the container named notebook, or else the first one ("" when
// the template has none).
func (s *NotebookSpec) MainContainer() string {
	cs := s.Template.Spec.Containers
	for _, c := range cs {
		if c.Name == NotebookContainer {
			return c.Name
		}
	}
	if len(cs) == 0 {
		return ""
	}
	return cs[0].Name
}

// NotebookPhase is the coarse state of a Notebook.
type NotebookPhase string

// The Notebook phases.
const (
	NotebookPending   NotebookPhase = "Pending"
	NotebookRunning   NotebookPhase = "Running"
	NotebookSuspended NotebookPhase = "Suspended"
	NotebookFailed    NotebookPhase = "Failed"
	NotebookUnknown   NotebookPhase = "Unknown"
)

// The condition types of the interactive workloads.
const (
	// ConditionIdle is True once the workload has had no activity for the
	// idle threshold; its message names the evidence.
	ConditionIdle = "Idle"
	// ConditionReady is True while the workload's pods serve.
	ConditionReady = "Ready"
)

// WorkloadCondition is a condition of a Notebook, TensorBoard or Explorer.
type WorkloadCondition struct {
	// type of the condition: Idle, Ready.
	Type string `json:"type"`
	// status: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// reason in CamelCase.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says why, naming the evidence.
	// +optional
	Message string `json:"message,omitempty"`
	// lastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// lastProbeTime is when the condition was last checked.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`
}

// NotebookSSHStatus is the state of a Notebook's SSH Service.
type NotebookSSHStatus struct {
	// serviceName of the SSH Service.
	// +optional
	ServiceName string `json:"serviceName,omitempty"`
	// port of the SSH server.
	// +optional
	Port int32 `json:"port,omitempty"`
	// clusterIp of the Service.
	// +optional
	ClusterIP string `json:"clusterIp,omitempty"`
	// nodePort of a NodePort Service.
	// +optional
	NodePort int32 `json:"nodePort,omitempty"`
	// protocol of the port.
	// +optional
	Protocol corev1.Protocol `json:"protocol,omitempty"`
	// lastSshClientActivity is when an SSH client was last seen.
	// +optional
	LastSSHClientActivity *metav1.Time `json:"lastSshClientActivity,omitempty"`
}

// NotebookStatus is the observed state of a Notebook.
type NotebookStatus struct {
	// phase: Pending, Running, Suspended, Failed or Unknown.
	// +optional
	Phase NotebookPhase `json:"phase,omitempty"`
	// pod is the notebook's pod.
	// +optional
	Pod *PodStatus `json:"pod,omitempty"`
	// ssh is the state of the SSH Service.
	// +optional
	SSH *NotebookSSHStatus `json:"ssh,omitempty"`
	// conditions: Idle, Ready.
	// +optional
	Conditions []WorkloadCondition `json:"conditions,omitempty"`
	// url of the notebook's web UI.
	// +optional
	URL string `json:"url,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=nb
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Notebook runs a Jupyter or RStudio server in a pod.
type Notebook struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec NotebookSpec `json:"spec"`
	// +optional
	Status NotebookStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// NotebookList is a list of Notebooks.
type NotebookList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Notebook `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Notebook{}, &NotebookList{})
}
