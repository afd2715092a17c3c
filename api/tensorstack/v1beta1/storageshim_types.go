package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelstack/accelstack/api/tensorstack/v1beta2"
)

// StorageShimSpec is the legacy, S3-only layout of a StorageShim: spec.s3.uri
// with top-level readOnly and secretRef. It also accepts the typed layout of
// v1beta2 (type, s3.readOnly, s3.secretRef, cephfs), because the platform's
// own examples write that layout under v1beta1; conversion merges the two.
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'cephfs' || has(self.cephfs)",message="spec.cephfs is required when spec.type is cephfs"
// +kubebuilder:validation:XValidation:rule="(has(self.type) && self.type == 'cephfs') || has(self.s3)",message="spec.s3 is required for an S3 StorageShim"
// +kubebuilder:validation:XValidation:rule="(has(self.type) && self.type == 'cephfs') || has(self.secretRef) || (has(self.s3) && has(self.s3.secretRef))",message="spec.secretRef is required for an S3 StorageShim"
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: delete the StorageShim and create it again to point it elsewhere"
type StorageShimSpec struct {
	// type is s3 (the default in this version) or cephfs.
	// +optional
	Type v1beta2.StorageShimType `json:"type,omitempty"`

	// s3 is the S3 bucket or prefix to expose.
	// +optional
	S3 *S3Config `json:"s3,omitempty"`

	// readOnly mounts the storage read-only. Defaults to false.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`

	// secretRef names a Secret of type S3-cfg in the same namespace.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`

	// cephfs is the CephFS directory to expose (typed layout).
	// +optional
	CephFS *v1beta2.CephFS `json:"cephfs,omitempty"`
}

// S3Config is the S3 part of a legacy StorageShim.
type S3Config struct {
	// uri is the bucket and optional prefix, s3://<bucket>[/<path>].
	// +required
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.matches('^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$')",message="spec.s3.uri must be s3://<bucket>[/<path>] with a bucket name of 3-63 lower-case letters, digits, dots and hyphens"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^s3://[^/]+/(.*/)?[.][.]?(/.*)?$')",message="spec.s3.uri must not contain . or .. path segments"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^s3://.+//')",message="spec.s3.uri must not contain empty path segments (//)"
	URI string `json:"uri"`

	// readOnly mounts the storage read-only (typed layout).
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`

	// secretRef names a Secret of type S3-cfg (typed layout).
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// StorageShim exposes an S3 bucket or prefix as a PVC of the same name and
// namespace. v1beta1 is served and converted; v1beta2 is stored.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="URI",type=string,JSONPath=`.spec.s3.uri`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StorageShim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the storage to expose.
	Spec StorageShimSpec `json:"spec"`
	// status is the observed state; the same shape as v1beta2.
	// +optional
	Status v1beta2.StorageShimStatus `json:"status,omitempty"`
}

// StorageShimList is a list of StorageShims.
// +kubebuilder:object:root=true
type StorageShimList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StorageShim `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &StorageShim{}, &StorageShimList{})
}
