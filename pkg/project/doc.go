// Package project runs the Project and QuotaProfile controller and the
// Project webhook.
//
// A Project (cluster-scoped, tensorstack.dev/v1beta1) is the namespace of
// the same name with its ResourceQuota, NetworkPolicy and ServiceAccount
// managed-project-sa. The controller creates the namespace and marks it
// with ProjectLabelKey; a namespace without that mark, or with another
// Project's, is never taken over. The ResourceQuota comes from
// spec.resourceQuota.template or from the QuotaProfile spec.quotaProfile
// names, and follows the profile's changes. The namespace carries the Pod
// Security labels of the Project's level (baseline unless the Project or
// its QuotaProfile says otherwise), keeping those an administrator set by
// hand. The NetworkPolicy is the default one (ingress from the project and
// the platform's namespaces; egress to them, to DNS and outside the
// link-local ranges) unless the Project writes its own or opts out.
//
// The namespace holds the users' data, so deleting a Project deletes it
// only when the Project carries DeleteNamespaceAnnotationKey: "true" at
// the time of its deletion. Otherwise the namespace and everything in it is
// kept, still marked as the Project's, and a Project of the same name
// created later takes it back.
package project
