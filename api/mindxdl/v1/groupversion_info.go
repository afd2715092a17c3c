// Package v1 contains API Schema definitions for the mindxdl.gitee.com v1
// API group: Huawei MindX DL's AscendJob, as ascend-operator serves it.
// +kubebuilder:object:generate=true
// +groupName=mindxdl.gitee.com
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "mindxdl.gitee.com", Version: "v1"}

	// SchemeBuilder registers the Go types of this group version with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &AscendJob{}, &AscendJobList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
