package rules

import (
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// Matches reports whether obj, the unstructured content of an object (as
// unstructured.Unstructured.Object holds it), meets r: both selectors, where
// set, must hold. A nil r, or one with neither selector, never matches. The
// error is a *SyntaxError when the fieldSelector does not parse.
func Matches(obj map[string]any, r *batchv1beta1.Rules) (bool, error) {
	if isEmpty(r) {
		return false, nil
	}
	sel, err := Parse(r.FieldSelector)
	if err != nil {
		return false, err
	}
	if !sel.Matches(obj) {
		return false, nil
	}
	if r.ConditionSelector != nil && !MatchesCondition(obj, *r.ConditionSelector) {
		return false, nil
	}
	return true, nil
}

// MatchesCondition reports whether status.conditions of obj holds an entry
// with the type and status of c.
func MatchesCondition(obj map[string]any, c batchv1beta1.ConditionSelector) bool {
	conds, _ := lookup(obj, []string{"status", "conditions"})
	list, _ := conds.([]any)
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if t, _ := m["type"].(string); t != c.Type {
			continue
		}
		if s, _ := m["status"].(string); s == string(c.Status) {
			return true
		}
	}
	return false
}

// Validate checks r for the admission webhook; path is where r is, e.g.
// spec.resource.successRules. A nil r is valid (unset); one with neither
// selector is not.
func Validate(r *batchv1beta1.Rules, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if isEmpty(r) {
		errs = append(errs, field.Required(path, "fieldSelector or conditionSelector is required"))
	}
	if _, err := Parse(r.FieldSelector); err != nil {
		detail := err.Error()
		if se := (*SyntaxError)(nil); errors.As(err, &se) {
			detail = se.Detail()
		}
		errs = append(errs, field.Invalid(path.Child("fieldSelector"), r.FieldSelector, detail))
	}
	if c := r.ConditionSelector; c != nil {
		cp := path.Child("conditionSelector")
		if c.Type == "" {
			errs = append(errs, field.Required(cp.Child("type"), ""))
		}
		switch c.Status {
		case corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown:
		default:
			errs = append(errs, field.NotSupported(cp.Child("status"), c.Status,
				[]corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}))
		}
	}
	return errs
}

// t9kJobKinds are the kinds of batch.tensorstack.dev whose rules are filled
// in: their status.phase ends Succeeded or Failed.
var t9kJobKinds = []string{
	"GenericJob", "MPIJob", "BeamJob", "TensorFlowTrainingJob", "PyTorchTrainingJob",
	"XGBoostTrainingJob", "ColossalAIJob", "DeepSpeedJob",
}

// ForT9kJob returns the rules filled in for a T9k Job, ok false for any
// other kind: success is "status.phase == Succeeded", failure
// "status.phase == Failed". The group must be batch.tensorstack.dev, so that
// another project's MPIJob (kubeflow.org) gets no rules. Each call returns
// new Rules.
func ForT9kJob(gk schema.GroupKind) (success, failure *batchv1beta1.Rules, ok bool) {
	if gk.Group != batchv1beta1.GroupVersion.Group {
		return nil, nil, false
	}
	for _, k := range t9kJobKinds {
		if k == gk.Kind {
			return &batchv1beta1.Rules{FieldSelector: "status.phase == " + string(batchv1beta1.JobSucceeded)},
				&batchv1beta1.Rules{FieldSelector: "status.phase == " + string(batchv1beta1.JobFailed)},
				true
		}
	}
	return nil, nil, false
}

func isEmpty(r *batchv1beta1.Rules) bool {
	return r == nil || strings.TrimSpace(r.FieldSelector) == "" && r.ConditionSelector == nil
}
