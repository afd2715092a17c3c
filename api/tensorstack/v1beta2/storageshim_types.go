package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageShimType names the kind of storage a StorageShim exposes.
// +kubebuilder:validation:Enum=s3;cephfs
type StorageShimType string

// The storage types a StorageShim supports.
const (
	StorageShimTypeS3     StorageShimType = "s3"
	StorageShimTypeCephFS StorageShimType = "cephfs"
)

// StorageShimSpec describes existing storage to expose as a PVC.
// +kubebuilder:validation:XValidation:rule="self.type != 's3' || has(self.s3)",message="spec.s3 is required when spec.type is s3"
// +kubebuilder:validation:XValidation:rule="self.type != 'cephfs' || has(self.cephfs)",message="spec.cephfs is required when spec.type is cephfs"
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: delete the StorageShim and create it again to point it elsewhere"
type StorageShimSpec struct {
	// type is the kind of storage: s3 or cephfs.
	// +required
	Type StorageShimType `json:"type"`

	// s3 points at an S3 bucket or prefix. Required when type is s3.
	// +optional
	S3 *S3 `json:"s3,omitempty"`

	// cephfs points at a directory of a CephFS file system. Required when type is cephfs.
	// +optional
	CephFS *CephFS `json:"cephfs,omitempty"`
}

// S3 describes an S3 bucket or prefix.
type S3 struct {
	// uri is the bucket and optional prefix, s3://<bucket>[/<path>]. The
	// bucket follows S3's naming rules; the path has no ".", ".." or empty
	// segments.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self.matches('^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$')",message="spec.s3.uri must be s3://<bucket>[/<path>] with a bucket name of 3-63 lower-case letters, digits, dots and hyphens"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^s3://[^/]+/(.*/)?[.][.]?(/.*)?$')",message="spec.s3.uri must not contain . or .. path segments"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^s3://.+//')",message="spec.s3.uri must not contain empty path segments (//)"
	URI string `json:"uri"`

	// readOnly mounts the storage read-only.
	// +optional
	// +kubebuilder:default=false
	ReadOnly bool `json:"readOnly,omitempty"`

	// secretRef names a Secret of type S3-cfg in the same namespace.
	// +required
	// +kubebuilder:validation:XValidation:rule="has(self.name) && self.name != ''",message="spec.s3.secretRef.name is required"
	SecretRef corev1.LocalObjectReference `json:"secretRef"`
}

// CephFS describes a directory of a CephFS file system.
type CephFS struct {
	// path is the absolute directory inside the CephFS file system, without
	// "." or ".." segments.
	// +required
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self.startsWith('/')",message="spec.cephfs.path must be an absolute path"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.]?(/|$)')",message="spec.cephfs.path must not contain . or .. segments"
	Path string `json:"path"`

	// client holds the Ceph client credentials.
	// +required
	Client CephClient `json:"client"`

	// server holds the Ceph cluster information.
	// +required
	Server CephServer `json:"server"`
}

// CephClient references the Secret with the Ceph client credentials.
type CephClient struct {
	// secretRef names a Secret of type Ceph Client (keys userID, userKey) in the same namespace.
	// +required
	// +kubebuilder:validation:XValidation:rule="has(self.name) && self.name != ''",message="spec.cephfs.client.secretRef.name is required"
	SecretRef corev1.LocalObjectReference `json:"secretRef"`
}

// CephServer references the ConfigMap describing the Ceph cluster.
type CephServer struct {
	// configMapRef names the ConfigMap with the keys driver, clusterID and fsName.
	// +required
	ConfigMapRef ConfigMapReference `json:"configMapRef"`
}

// ConfigMapReference names a ConfigMap, optionally in another namespace.
type ConfigMapReference struct {
	// name of the ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// namespace of the ConfigMap; defaults to the StorageShim's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// StorageShimConditionType names a StorageShim condition.
type StorageShimConditionType string

// StorageShimReady is True once the StorageShim's PVC is bound; when False,
// its reason and message say what is wrong (a missing Secret, a bad key, a
// PVC name taken by another PVC, ...).
const StorageShimReady StorageShimConditionType = "Ready"

// StorageShimCondition describes one aspect of a StorageShim's state.
type StorageShimCondition struct {
	// type of the condition.
	Type StorageShimConditionType `json:"type"`
	// status is True, False or Unknown.
	Status metav1.ConditionStatus `json:"status"`
	// reason is a CamelCase word for the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message says what happened, for humans.
	// +optional
	Message string `json:"message,omitempty"`
	// lastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// StorageShimStatus is the observed state of a StorageShim.
type StorageShimStatus struct {
	// phase mirrors the phase of the PVC the StorageShim created.
	// +optional
	Phase corev1.PersistentVolumeClaimPhase `json:"phase,omitempty"`

	// conditions explain the state, failures included.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []StorageShimCondition `json:"conditions,omitempty"`
}

// StorageShim exposes existing storage (an S3 prefix, a CephFS directory) as
// a PVC of the same name and namespace, without copying data.
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StorageShim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the storage to expose.
	Spec StorageShimSpec `json:"spec"`
	// status is the observed state.
	// +optional
	Status StorageShimStatus `json:"status,omitempty"`
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
