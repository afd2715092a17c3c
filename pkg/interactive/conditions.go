package interactive

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// FindCondition returns the condition typ of conds, nil when there is
// none. It points into conds: copy it to keep it past a change of conds.
func FindCondition(conds []tensorstackv1beta1.WorkloadCondition, typ string) *tensorstackv1beta1.WorkloadCondition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// SetCondition puts c into conds in place of the condition of its type,
// leaving the others (such as the Resource Keeper's Idle) as they are.
// The lastTransitionTime is kept while the status stays, and becomes now
// when it changes (or was never set); the lastProbeTime is c's, or the old
// one's when c has none.
func SetCondition(conds *[]tensorstackv1beta1.WorkloadCondition, c tensorstackv1beta1.WorkloadCondition, now metav1.Time) {
	old := FindCondition(*conds, c.Type)
	if old == nil {
		c.LastTransitionTime = now
		*conds = append(*conds, c)
		return
	}
	c.LastTransitionTime = old.LastTransitionTime
	if old.Status != c.Status || c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = now
	}
	if c.LastProbeTime.IsZero() {
		c.LastProbeTime = old.LastProbeTime
	}
	*old = c
}

// RemoveCondition drops the condition typ from conds.
func RemoveCondition(conds *[]tensorstackv1beta1.WorkloadCondition, typ string) {
	*conds = slices.DeleteFunc(*conds, func(c tensorstackv1beta1.WorkloadCondition) bool { return c.Type == typ })
}

// FromTensorBoardConditions returns the conditions of a TensorBoard as
// WorkloadConditions, for the helpers above: they are the same but for
// the reason, which a TensorBoard's conditions do not have.
func FromTensorBoardConditions(conds []tensorstackv1beta1.TensorBoardCondition) []tensorstackv1beta1.WorkloadCondition {
	if conds == nil {
		return nil
	}
	out := make([]tensorstackv1beta1.WorkloadCondition, 0, len(conds))
	for _, c := range conds {
		out = append(out, tensorstackv1beta1.WorkloadCondition{Type: string(c.Type), Status: c.Status, Message: c.Message,
			LastTransitionTime: c.LastTransitionTime, LastProbeTime: c.LastProbeTime})
	}
	return out
}

// ToTensorBoardConditions returns conds as the conditions of a
// TensorBoard, without their reasons.
func ToTensorBoardConditions(conds []tensorstackv1beta1.WorkloadCondition) []tensorstackv1beta1.TensorBoardCondition {
	if conds == nil {
		return nil
	}
	out := make([]tensorstackv1beta1.TensorBoardCondition, 0, len(conds))
	for _, c := range conds {
		out = append(out, tensorstackv1beta1.TensorBoardCondition{Type: tensorstackv1beta1.TensorBoardConditionType(c.Type), Status: c.Status,
			Message: c.Message, LastTransitionTime: c.LastTransitionTime, LastProbeTime: c.LastProbeTime})
	}
	return out
}
