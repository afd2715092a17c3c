package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProjectResourceQuotaTemplate is the ResourceQuota a Project materialises.
type ProjectResourceQuotaTemplate struct {
	// spec of the project's ResourceQuota.
	Spec corev1.ResourceQuotaSpec `json:"spec"`
}

// ProjectResourceQuota is the quota of a Project's namespace.
type ProjectResourceQuota struct {
	// template is the ResourceQuota defined for this project.
	// +optional
	Template *ProjectResourceQuotaTemplate `json:"template,omitempty"`
}

// ProjectNetworkPolicyTemplate is the NetworkPolicy a Project materialises.
type ProjectNetworkPolicyTemplate struct {
	// spec of the project's NetworkPolicy; its podSelector selects pods in
	// the project's namespace.
	Spec networkingv1.NetworkPolicySpec `json:"spec"`
}

// ProjectNetworkPolicy is the NetworkPolicy of a Project's namespace.
type ProjectNetworkPolicy struct {
	// useDefaultTemplate applies the default NetworkPolicy: ingress only
	// from the platform's namespaces and from the project itself; egress
	// to them, to DNS and to addresses outside the link-local ranges. It
	// takes precedence over template.
	// +optional
	UseDefaultTemplate bool `json:"useDefaultTemplate,omitempty"`
	// template is a NetworkPolicy defined for this project, applied when
	// useDefaultTemplate is false. useDefaultTemplate false without a
	// template means no NetworkPolicy.
	// +optional
	Template *ProjectNetworkPolicyTemplate `json:"template,omitempty"`
}

// PodSecurityLevel is a Pod Security Standard level, as the API server's
// Pod Security admission enforces it on a namespace.
// +kubebuilder:validation:Enum=privileged;baseline;restricted
type PodSecurityLevel string

// The Pod Security Standard levels.
const (
	// PodSecurityPrivileged allows everything, node access included.
	PodSecurityPrivileged PodSecurityLevel = "privileged"
	// PodSecurityBaseline refuses what gives a pod the node: privileged
	// containers, host namespaces, hostPath volumes, host ports, added
	// capabilities beyond the runtime's defaults.
	PodSecurityBaseline PodSecurityLevel = "baseline"
	// PodSecurityRestricted also requires non-root, no privilege
	// escalation, dropped capabilities and a seccomp profile.
	PodSecurityRestricted PodSecurityLevel = "restricted"
)

// ProjectSpec is the desired state of a Project.
// +kubebuilder:validation:XValidation:rule="!(has(self.quotaProfile) && size(self.quotaProfile) > 0 && has(self.resourceQuota) && has(self.resourceQuota.template))",message="spec.quotaProfile and spec.resourceQuota.template are mutually exclusive: set one",fieldPath=".quotaProfile"
type ProjectSpec struct {
	// resourceQuota is the quota of the project's namespace. Exclusive with
	// quotaProfile.
	// +optional
	ResourceQuota *ProjectResourceQuota `json:"resourceQuota,omitempty"`
	// networkPolicy is the NetworkPolicy of the project's namespace; unset
	// means the default one (see useDefaultTemplate).
	// +optional
	NetworkPolicy *ProjectNetworkPolicy `json:"networkPolicy,omitempty"`
	// quotaProfile names a QuotaProfile whose spec becomes the project's
	// ResourceQuota and follows its changes. Exclusive with
	// resourceQuota.template.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == '' || self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="spec.quotaProfile must be the name of a QuotaProfile (a DNS subdomain)"
	QuotaProfile string `json:"quotaProfile,omitempty"`
	// defaultScheduler is the default scheduler and queue of the project's
	// workloads; recorded for the consoles, the controller does nothing with
	// it.
	// +optional
	DefaultScheduler *SchedulePolicy `json:"defaultScheduler,omitempty"`
	// podSecurity is the Pod Security Standard the API server enforces on
	// the project's pods: privileged, baseline or restricted. Unset means
	// the podSecurity of the QuotaProfile spec.quotaProfile names, else
	// baseline.
	// +optional
	PodSecurity PodSecurityLevel `json:"podSecurity,omitempty"`
}

// ProjectConditionType names a Project condition.
type ProjectConditionType string

// The Project condition types.
const (
	// ProjectReady is True once the namespace and everything the spec asks
	// for in it exist as asked.
	ProjectReady ProjectConditionType = "Ready"
)

// ProjectCondition describes one aspect of a Project's state.
type ProjectCondition struct {
	// type of the condition: Ready.
	Type ProjectConditionType `json:"type"`
	// status: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// lastUpdateTime is when the condition was last probed.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
	// lastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// reason in CamelCase.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says why, naming the evidence.
	// +optional
	Message string `json:"message,omitempty"`
}

// ProjectResourceQuotaStatus is the state of a Project's ResourceQuota.
type ProjectResourceQuotaStatus struct {
	// name of the ResourceQuota in the project's namespace.
	// +optional
	Name string `json:"name,omitempty"`
	// hard and used, as the ResourceQuota reports them.
	corev1.ResourceQuotaStatus `json:",inline"`
}

// ProjectStatus is the observed state of a Project.
type ProjectStatus struct {
	// conditions: Ready.
	// +optional
	Conditions []ProjectCondition `json:"conditions,omitempty"`
	// resourceQuota is the state of the project's ResourceQuota.
	// +optional
	ResourceQuota *ProjectResourceQuotaStatus `json:"resourceQuota,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=proj
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a valid namespace name: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Quota Profile",type=string,JSONPath=`.spec.quotaProfile`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Project is a tenant of the platform: the namespace of the same name, its
// ResourceQuota, NetworkPolicy and ServiceAccount managed-project-sa.
type Project struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ProjectSpec `json:"spec,omitempty"`
	// +optional
	Status ProjectStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ProjectList is a list of Projects.
type ProjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Project `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=qp
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// QuotaProfile is a named ResourceQuotaSpec that Projects refer to by
// spec.quotaProfile; a change to it reaches every such Project's quota.
type QuotaProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the ResourceQuotaSpec of the Projects using this profile.
	// +optional
	Spec corev1.ResourceQuotaSpec `json:"spec,omitempty"`
	// podSecurity is the Pod Security Standard of the Projects using this
	// profile that set none themselves; unset means baseline.
	// +optional
	PodSecurity PodSecurityLevel `json:"podSecurity,omitempty"`
}

// +kubebuilder:object:root=true

// QuotaProfileList is a list of QuotaProfiles.
type QuotaProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []QuotaProfile `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &Project{}, &ProjectList{}, &QuotaProfile{}, &QuotaProfileList{})
}
