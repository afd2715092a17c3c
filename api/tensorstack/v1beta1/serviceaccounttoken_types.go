package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceAccountTokenSpec is the desired state of a ServiceAccountToken.
type ServiceAccountTokenSpec struct {
	// duration is the requested token lifetime, e.g. 1h, 3w or 2h45m (units
	// y = 365 days, w, d, h, m, s); 0 asks for no end: the token is renewed
	// before it expires for as long as the ServiceAccountToken exists. The
	// API server grants at least 10 minutes and may cap the lifetime; the
	// token is renewed up to the end the duration sets.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?)$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.duration is immutable: delete the ServiceAccountToken and create it again"
	Duration string `json:"duration"`
}

// SecretReference names a Secret in the namespace of the object that holds
// the reference.
type SecretReference struct {
	// name of the Secret that holds the token and kubeconfig.
	Name string `json:"name"`
}

// ServiceAccountTokenConditionType names a ServiceAccountToken condition.
type ServiceAccountTokenConditionType string

// The ServiceAccountToken condition types and reasons.
const (
	// ServiceAccountTokenReady is True while the token in the Secret is
	// valid.
	ServiceAccountTokenReady ServiceAccountTokenConditionType = "Ready"

	// ReasonSubresourcesReady: the ServiceAccount, its RoleBinding and the
	// Secret exist and the token is valid.
	ReasonSubresourcesReady = "SubresourcesReady"
	// ReasonTokenExpired: the token's lifetime has passed.
	ReasonTokenExpired = "TokenExpired"
	// ReasonSubresourceNotFound: an object the token depends on was
	// deleted before the token expired.
	ReasonSubresourceNotFound = "SubresourceNotFound"
)

// ServiceAccountTokenCondition describes one aspect of a
// ServiceAccountToken's state.
type ServiceAccountTokenCondition struct {
	// type of the condition: Ready.
	Type ServiceAccountTokenConditionType `json:"type"`
	// status: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// lastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// reason in CamelCase: SubresourcesReady, TokenExpired or
	// SubresourceNotFound.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says why, for humans.
	// +optional
	Message string `json:"message,omitempty"`
}

// ServiceAccountTokenStatus is the observed state of a ServiceAccountToken.
type ServiceAccountTokenStatus struct {
	// secretRef names the Secret holding the keys token and kubeconfig.
	// +optional
	SecretRef *SecretReference `json:"secretRef,omitempty"`
	// expirationTime is when the token in the Secret expires.
	// +optional
	ExpirationTime *metav1.Time `json:"expirationTime,omitempty"`
	// conditions: Ready.
	// +optional
	Conditions []ServiceAccountTokenCondition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sat
// +kubebuilder:printcolumn:name="Duration",type=string,JSONPath=`.spec.duration`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Expires",type=string,JSONPath=`.status.expirationTime`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.status.secretRef.name`

// ServiceAccountToken issues a token and a kubeconfig for a ServiceAccount
// of its own name, with the rights of a project member in its namespace,
// and keeps them in a Secret.
type ServiceAccountToken struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ServiceAccountTokenSpec `json:"spec"`
	// +optional
	Status ServiceAccountTokenStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ServiceAccountTokenList is a list of ServiceAccountTokens.
type ServiceAccountTokenList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServiceAccountToken `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ServiceAccountToken{}, &ServiceAccountTokenList{})
}
