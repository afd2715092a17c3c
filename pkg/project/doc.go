// Package project runs the Project and QuotaProfile controller and the
// Project webhook.
//
// A Project (cluster-scoped, tensorstack.dev/v1beta1) is the namespace of
// the same name with its ResourceQuota, NetworkPolicy and ServiceAccount
// managed-project-sa. The controller creates the namespace and marks it
// with ProjectLabelKey; a namespace without that mark, or with another
// Project's, is never taken over. The ResourceQuota comes from
// spec.resourceQuota.template or from the QuotaProfile spec.quotaProfile
// names, and follows the profile's changes.
//
// The namespace holds the users' data, so deleting a Project deletes it
// only when the Project carries DeleteNamespaceAnnotationKey: "true" at
// the time of its deletion. Otherwise the namespace and everything in it is
// kept, still marked as the Project's, and a Project of the same name
// created later takes it back.
package project
