package explorer

import (
	"github.com/accelstack/accelstack/pkg/webroute"
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

// Component is a sub-workload of an Explorer; the names and paths of each
// are the gateway's contract (package webroute).
type Component = webroute.ExplorerComponent

// The sub-workloads; each names its container and its URL's last part.
const (
	FileBrowser = webroute.FileBrowser
	CodeServer  = webroute.CodeServer
)

// Components are the sub-workloads, in the order they are reconciled.
var Components = webroute.ExplorerComponents

// The servers' own ports, on the pod's loopback only; the activity
// sidecar proxies to them.
const (
	FileBrowserPort = 8081
	CodeServerPort  = 8082
)

// MountPath is where both sub-workloads mount the PVC, as Notebooks do.
const MountPath = "/t9k/mnt"

// ObjectName returns the name of the Deployment and Service of the
// component of the Explorer name (webroute.ExplorerObjectName).
func ObjectName(name string, c Component) string { return webroute.ExplorerObjectName(name, c) }

// InstanceName returns the value of InstanceLabelKey of the Explorer name.
func InstanceName(name string) string { return webroute.ExplorerInstanceName(name) }

// URLPrefix returns the path the gateway serves the component of the
// Explorer namespace/name at (webroute.ExplorerPrefix).
func URLPrefix(namespace, name string, c Component) string {
	return webroute.ExplorerPrefix(namespace, name, c)
}

// URL returns the URL of the component of the Explorer namespace/name, its
// status url: URLPrefix on the gateway's host when gatewayHost is set, else
// its in-cluster URL (webroute.ExplorerURL).
func URL(gatewayHost, namespace, name string, c Component) string {
	return webroute.StatusURL(gatewayHost, webroute.ExplorerURL(namespace, name, c), URLPrefix(namespace, name, c))
}
