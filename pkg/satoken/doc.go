// Package satoken runs the ServiceAccountToken controller.
//
// A ServiceAccountToken gets a ServiceAccount of its own name, bound in its
// namespace to the ClusterRole MemberClusterRole, and a Secret
// <name>-<5 hex digits> holding a token of that ServiceAccount (the
// TokenRequest API) and a kubeconfig using it. The token is bound to the
// Secret: deleting the Secret or the ServiceAccount revokes it. When the
// API server grants a shorter lifetime than spec.duration asks for, the
// controller renews the token until the duration is over; then the Ready
// condition turns False (TokenExpired). A ServiceAccount or Secret deleted
// before that turns it False for good (SubresourceNotFound): the user
// creates the ServiceAccountToken again.
//
// The token is written to the Secret only: never to a log, an event or the
// status.
package satoken
