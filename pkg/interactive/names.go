package interactive

import (
	"k8s.io/apimachinery/pkg/util/validation"
)

// The app.kubernetes.io labels of the workloads' objects.
const (
	AppNameLabelKey      = "app.kubernetes.io/name"
	AppInstanceLabelKey  = "app.kubernetes.io/instance"
	AppComponentLabelKey = "app.kubernetes.io/component"
	AppManagedByLabelKey = "app.kubernetes.io/managed-by"
	// ManagedBy is the value of AppManagedByLabelKey.
	ManagedBy = "accelstack"
)

// AppLabels returns the app.kubernetes.io labels of an object of the
// workload name of app, with its component; the instance label is left out
// when name is not a valid label value.
func AppLabels(app, name, component string) map[string]string {
	l := map[string]string{
		AppNameLabelKey:      app,
		AppComponentLabelKey: component,
		AppManagedByLabelKey: ManagedBy,
	}
	if len(validation.IsValidLabelValue(name)) == 0 {
		l[AppInstanceLabelKey] = name
	}
	return l
}
