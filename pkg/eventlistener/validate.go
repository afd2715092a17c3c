package eventlistener

import (
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/eventlistener/filter"
)

// MaxTriggerConfigBytes bounds the JSON of a trigger's sources and
// workflowRunSpec, which its pods get in an environment variable (Linux
// takes at most 128 KiB in one).
const MaxTriggerConfigBytes = 96 << 10

// ValidateTrigger returns what is wrong with a WorkflowTrigger that the
// CRD's schema does not catch: no event source, a listener name that is no
// object name or is named twice, a filter path that does not start with
// "body." or "header.", a filter value that does not parse as its type, a
// $(body...) or $(header...) reference in a param value with a bad path, a
// bad service account name, or a spec too large for the trigger's pods.
func ValidateTrigger(wt *triggersv1beta1.WorkflowTrigger) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	sources := spec.Child("eventSources")
	if len(wt.Spec.EventSources) == 0 {
		errs = append(errs, field.Required(sources, "at least one event source is required"))
	}
	seen := map[string]bool{}
	for i, s := range wt.Spec.EventSources {
		p := sources.Index(i)
		name := p.Child("eventListenerName")
		switch {
		case s.EventListenerName == "":
			errs = append(errs, field.Required(name, "the EventListener's name is required"))
		case len(validation.IsDNS1123Subdomain(s.EventListenerName)) > 0:
			for _, msg := range validation.IsDNS1123Subdomain(s.EventListenerName) {
				errs = append(errs, field.Invalid(name, s.EventListenerName, msg))
			}
		case seen[s.EventListenerName]:
			errs = append(errs, field.Duplicate(name, s.EventListenerName))
		}
		seen[s.EventListenerName] = true
		for j, f := range s.Filters {
			fp := p.Child("filters").Index(j)
			if err := filter.ValidatePath(f.Path); err != nil {
				errs = append(errs, field.Invalid(fp.Child("path"), f.Path, err.Error()))
			}
			if len(f.Values) == 0 {
				errs = append(errs, field.Required(fp.Child("values"), "at least one value is required"))
			}
			for k, v := range f.Values {
				if err := filter.ValidateValue(f.Type, v); err != nil {
					errs = append(errs, field.Invalid(fp.Child("values").Index(k), v, err.Error()))
				}
			}
		}
	}
	for i, param := range wt.Spec.WorkflowRunSpec.Params {
		for _, ref := range filter.Refs(param.Value) {
			if err := filter.ValidatePath(ref); err != nil {
				errs = append(errs, field.Invalid(spec.Child("workflowRunSpec", "params").Index(i).Child("value"), param.Value,
					"$("+ref+"): "+err.Error()))
			}
		}
	}
	if sa := wt.Spec.ServiceAccountName; sa != "" {
		for _, msg := range validation.IsDNS1123Subdomain(sa) {
			errs = append(errs, field.Invalid(spec.Child("serviceAccountName"), sa, msg))
		}
	}
	if config, err := TriggerConfigJSON(wt); err != nil {
		errs = append(errs, field.InternalError(spec, err))
	} else if len(config) > MaxTriggerConfigBytes {
		errs = append(errs, field.TooLong(spec, "", MaxTriggerConfigBytes))
	}
	return errs
}
