package serving

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// SetCondition puts c into conds in place of the condition of its type,
// keeping the lastTransitionTime when the status did not change and
// stamping now otherwise.
func SetCondition(conds *[]tensorstackv1beta1.WorkloadCondition, c tensorstackv1beta1.WorkloadCondition, now metav1.Time) {
	if old := FindCondition(*conds, c.Type); old != nil {
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status || c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = now
		}
		*old = c
		return
	}
	c.LastTransitionTime = now
	*conds = append(*conds, c)
}

// RemoveCondition drops the condition typ from conds.
func RemoveCondition(conds *[]tensorstackv1beta1.WorkloadCondition, typ string) {
	out := (*conds)[:0]
	for _, c := range *conds {
		if c.Type != typ {
			out = append(out, c)
		}
	}
	*conds = out
}

// FindCondition returns the condition typ of conds, nil when there is none.
func FindCondition(conds []tensorstackv1beta1.WorkloadCondition, typ string) *tensorstackv1beta1.WorkloadCondition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}
