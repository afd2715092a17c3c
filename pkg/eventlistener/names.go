package eventlistener

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
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

// ClusterDomain is the DNS domain of the cluster's Services.
const ClusterDomain = "cluster.local"

// ListenerObjectName returns the name of the Deployment and Service of the
// listener name with uid: <name>-eventlistener-<5 hex digits of the UID>.
func ListenerObjectName(name string, uid types.UID) string {
	return objectName(name, "eventlistener", uid)
}

// TriggerObjectName returns the name of the Deployment and Service of the
// trigger name with uid: <name>-workflowtrigger-<5 hex digits of the UID>.
func TriggerObjectName(name string, uid types.UID) string {
	return objectName(name, "workflowtrigger", uid)
}

// objectName is <name>-<kind>-<5 hex digits of a hash of uid>, made a
// DNS-1035 label, as a Service's name must be: dots become dashes, a name
// that does not start with a letter gets an "x", and the name is cut to
// keep the whole within 63 characters.
func objectName(name, kind string, uid types.UID) string {
	sum := sha256.Sum256([]byte(uid))
	suffix := "-" + kind + "-" + hex.EncodeToString(sum[:])[:5]
	base := strings.ReplaceAll(name, ".", "-")
	if base == "" || base[0] < 'a' || base[0] > 'z' {
		base = "x" + base
	}
	if max := validation.DNS1035LabelMaxLength - len(suffix); len(base) > max {
		base = strings.TrimRight(base[:max], "-")
	}
	return base + suffix
}

// InClusterURL returns the URL of the Service name in namespace.
func InClusterURL(namespace, name string) string {
	return "http://" + name + "." + namespace + ".svc." + ClusterDomain
}

// TriggerURL returns the address listeners deliver events to: the
// trigger's headless Service, name, at the servers' own port.
func TriggerURL(namespace, name string) string {
	return fmt.Sprintf("%s:%d", InClusterURL(namespace, name), serverconfig.Port)
}

// ExternalURL returns the URL an ingress at host serves the listener name
// of namespace at, or "" without a host.
func ExternalURL(host, namespace, name string) string {
	if host == "" {
		return ""
	}
	return "https://" + host + serverconfig.Source(namespace, name)
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
