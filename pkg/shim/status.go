package shim

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta2 "github.com/accelstack/accelstack/api/tensorstack/v1beta2"
)

// Reasons of the StorageShim Ready condition.
const (
	ReasonBound             = "Bound"
	ReasonPending           = "Pending"
	ReasonInvalidSpec       = "InvalidSpec"
	ReasonSecretNotFound    = "SecretNotFound"
	ReasonSecretInvalid     = "SecretInvalid"
	ReasonConfigMapNotFound = "ConfigMapNotFound"
	ReasonConfigMapInvalid  = "ConfigMapInvalid"
	ReasonPVCConflict       = "PVCConflict"
)

// shimFailure is a problem only the user can fix; it becomes the Ready
// condition's reason and message and a Warning event.
type shimFailure struct {
	reason, message string
}

func (f *shimFailure) Error() string { return f.reason + ": " + f.message }

func failf(reason, format string, args ...any) error {
	return &shimFailure{reason: reason, message: fmt.Sprintf(format, args...)}
}

// setCondition sets a condition, moving lastTransitionTime only when the status changes.
func setCondition(conds *[]tensorstackv1beta2.StorageShimCondition, t tensorstackv1beta2.StorageShimConditionType, status metav1.ConditionStatus, reason, message string) {
	for i := range *conds {
		c := &(*conds)[i]
		if c.Type != t {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = metav1.Now()
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	*conds = append(*conds, tensorstackv1beta2.StorageShimCondition{
		Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.Now(),
	})
}

// equalStatus compares statuses semantically (times at second precision).
func equalStatus(a, b tensorstackv1beta2.StorageShimStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}
