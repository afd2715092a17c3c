package explorer

import (
	"github.com/accelstack/accelstack/pkg/interactive"
)

// LabelKey is the label, on the Deployments, Services and pods of an
// Explorer, whose value is the Deployment's name (ObjectName); it selects
// a sub-workload's pod and restricts the controller's cache.
const LabelKey = "tensorstack.dev/explorer"

// InstanceLabelKey is the label, on the same objects, whose value is the
// same for both sub-workloads of one Explorer: InstanceName.
const InstanceLabelKey = "tensorstack.dev/explorer-instance"

// appName is the app.kubernetes.io/name of the objects.
const appName = "explorer"

// Component is a sub-workload of an Explorer.
type Component string

// The sub-workloads; each names its container and its URL's last part.
const (
	FileBrowser Component = "file-browser"
	CodeServer  Component = "code-server"
)

// Components are the sub-workloads, in the order they are reconciled.
var Components = []Component{FileBrowser, CodeServer}

// The servers' own ports, on the pod's loopback only; the activity
// sidecar proxies to them.
const (
	FileBrowserPort = 8081
	CodeServerPort  = 8082
)

// MountPath is where both sub-workloads mount the PVC, as Notebooks do.
const MountPath = "/t9k/mnt"

// ObjectName returns the name of the Deployment and Service of the
// component of the Explorer name: <name>-explorer-<component>, cut and
// hashed when that is not a DNS-1035 label.
func ObjectName(name string, c Component) string {
	return interactive.ObjectName(name, appName+"-"+string(c))
}

// InstanceName returns the value of InstanceLabelKey of the Explorer name.
func InstanceName(name string) string { return interactive.ObjectName(name, appName) }

// URLPrefix returns the path a gateway serves the component of the
// Explorer namespace/name at: /explorer/<namespace>/<name>/<component>/.
// The file browser serves under it (--baseurl), so the gateway routes it
// unchanged; code-server serves at its root, with relative links, so the
// gateway strips the prefix for it.
func URLPrefix(namespace, name string, c Component) string {
	return interactive.URLPrefix(appName, namespace, name, string(c))
}

// URL returns the in-cluster URL of the component of the Explorer
// namespace/name, its status url: its Service, and URLPrefix for the file
// browser, the root for code-server.
func URL(namespace, name string, c Component) string {
	path := "/"
	if c == FileBrowser {
		path = URLPrefix(namespace, name, c)
	}
	return interactive.InClusterURL(namespace, ObjectName(name, c), path)
}
