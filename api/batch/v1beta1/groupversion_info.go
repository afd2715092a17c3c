// Package v1beta1 contains API Schema definitions for the batch.tensorstack.dev v1beta1 API group.
// +kubebuilder:object:generate=true
// +groupName=batch.tensorstack.dev
package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "batch.tensorstack.dev", Version: "v1beta1"}

	// SchemeBuilder registers the Go types of this group version with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
