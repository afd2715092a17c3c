package satoken

import (
	"crypto/sha256"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/types"
)

// Keys of the Secret.
const (
	// TokenKey holds the token.
	TokenKey = "token"
	// KubeconfigKey holds a kubeconfig using the token.
	KubeconfigKey = "kubeconfig"
)

// Labels and annotations.
const (
	// NameLabelKey marks the ServiceAccount, RoleBinding and Secret of a
	// ServiceAccountToken with its name.
	NameLabelKey = "tensorstack.dev/serviceaccounttoken"
	// IssuedAtAnnotationKey on the Secret is when its token was issued
	// (RFC 3339).
	IssuedAtAnnotationKey = "tensorstack.dev/issued-at"
)

// MemberClusterRole is the ClusterRole a ServiceAccountToken's
// ServiceAccount is bound to in its namespace: the rights of a project
// member (deploy/controllers/project-roles.yaml).
const MemberClusterRole = "accelstack-project-member"

// SecretName is the name of the Secret of the ServiceAccountToken name
// with uid: the name and 5 hex digits derived from the uid, the same at
// every reconcile.
func SecretName(name string, uid types.UID) string {
	sum := sha256.Sum256([]byte(uid))
	suffix := hex.EncodeToString(sum[:])[:5]
	if len(name) > 253-6 {
		name = name[:253-6]
	}
	return name + "-" + suffix
}
