// Package v1beta1 contains the event-driven workflow kinds of the
// tensorstack.dev v1beta1 API group, EventListener and WorkflowTrigger. They
// are apart from package tensorstack/v1beta1 because a trigger embeds a
// batch.tensorstack.dev WorkflowRunSpec, whose package imports that one.
// +kubebuilder:object:generate=true
// +groupName=tensorstack.dev
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "tensorstack.dev", Version: "v1beta1"}

	// SchemeBuilder registers the Go types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &EventListener{}, &EventListenerList{}, &WorkflowTrigger{}, &WorkflowTriggerList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
