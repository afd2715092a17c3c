package eventlistener

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
	"github.com/accelstack/accelstack/pkg/webroute"
)

// WorkflowEventsLabelKey is the label, on the Deployments, Services and
// pods of listeners and triggers, whose value is the Deployment's name; it
// selects the pods and restricts the controllers' cache.
const WorkflowEventsLabelKey = "tensorstack.dev/workflow-events"

// The app.kubernetes.io labels of the listeners' and triggers' objects.
const (
	appNameLabelKey      = "app.kubernetes.io/name"
	appComponentLabelKey = "app.kubernetes.io/component"
	appName              = "workflow-events"
	listenerComponent    = "event-listener"
	triggerComponent     = "workflow-trigger"
)

// ListenerObjectName returns the name of the Deployment and Service of the
// listener name with uid: <name>-eventlistener-<5 hex digits of the UID>.
func ListenerObjectName(name string, uid types.UID) string {
	return webroute.EventListenerObjectName(name, string(uid))
}

// TriggerObjectName returns the name of the Deployment and Service of the
// trigger name with uid: <name>-workflowtrigger-<5 hex digits of the UID>.
func TriggerObjectName(name string, uid types.UID) string {
	return webroute.UIDObjectName(name, "workflowtrigger", string(uid))
}

// InClusterURL returns the URL of the Service name in namespace.
func InClusterURL(namespace, name string) string { return webroute.InClusterURL(namespace, name, "") }

// TriggerURL returns the address listeners deliver events to: the
// trigger's headless Service, name, at the servers' own port.
func TriggerURL(namespace, name string) string {
	return fmt.Sprintf("%s:%d", InClusterURL(namespace, name), serverconfig.Port)
}

// ExternalURL returns the URL an ingress at host serves the listener name
// of namespace at, or "" without a host.
func ExternalURL(host, namespace, name string) string {
	return webroute.ExternalURL(host, webroute.EventListenerPath(namespace, name))
}

// objectLabels returns the labels of the objects named object of the
// listener or trigger name: WorkflowEventsLabelKey, the app labels, and
// nameKey with the name when it is a valid label value.
func objectLabels(object, component, nameKey, name string) map[string]string {
	l := map[string]string{
		WorkflowEventsLabelKey: object,
		appNameLabelKey:        appName,
		appComponentLabelKey:   component,
	}
	if len(validation.IsValidLabelValue(name)) == 0 {
		l[nameKey] = name
	}
	return l
}
