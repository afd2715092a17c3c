package project

import "sigs.k8s.io/controller-runtime/pkg/client"

// The names of what a Project creates in its namespace.
const (
	// ResourceQuotaName is the project's ResourceQuota.
	ResourceQuotaName = "managed-project-quota"
	// NetworkPolicyName is the project's NetworkPolicy.
	NetworkPolicyName = "managed-project-network-policy"
	// ServiceAccountName is the ServiceAccount WorkflowRuns create jobs as,
	// and the name of its RoleBinding.
	ServiceAccountName = "managed-project-sa"
	// ServiceAccountClusterRole is the ClusterRole bound to
	// managed-project-sa in the project (deploy/controllers/project-roles.yaml).
	ServiceAccountClusterRole = "accelstack-managed-project-sa"
)

// Label and annotation keys.
const (
	// ProjectLabelKey marks a namespace, and the objects the controller
	// creates in it, with the name of the Project they belong to.
	ProjectLabelKey = "tensorstack.dev/project"
	// DeleteNamespaceAnnotationKey set to "true" on a Project confirms that
	// deleting the Project deletes its namespace and everything in it.
	DeleteNamespaceAnnotationKey = "tensorstack.dev/delete-namespace"
	// Finalizer holds a deleted Project until its namespace is released or
	// deleted.
	Finalizer = "tensorstack.dev/project-namespace"
)

// DefaultPolicyNamespaces are the namespaces, besides the project's own,
// whose pods the default NetworkPolicy admits: the platform's consoles
// (t9k-system) and the controllers (accelstack-system).
var DefaultPolicyNamespaces = []string{"t9k-system", "accelstack-system"}

// ownedBy reports whether obj carries the mark of the Project name.
func ownedBy(obj client.Object, name string) bool {
	return obj.GetLabels()[ProjectLabelKey] == name
}
