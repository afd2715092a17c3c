// Package v1alpha1 contains the API Schema definitions of the DLRover
// elastic.iml.github.io v1alpha1 API group: ElasticJob and ScalePlan, with
// the field names, defaults and JSON layout of DLRover's operator so that
// DLRover manifests apply unchanged.
// +kubebuilder:object:generate=true
// +groupName=elastic.iml.github.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "elastic.iml.github.io", Version: "v1alpha1"}

	// SchemeBuilder registers the Go types of this group version with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// objectTypes are the kinds of this group version; each *_types.go file adds
// its kind and list in init.
var objectTypes []runtime.Object

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, objectTypes...)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
