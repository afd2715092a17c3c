package tensorboard

import (
	"github.com/accelstack/accelstack/pkg/webroute"
)

// LabelKey is the label, on a TensorBoard's Deployment, Service and pod,
// whose value is the Deployment's name (ObjectName); it selects the pod and
// restricts the controller's cache.
const LabelKey = "tensorstack.dev/tensorboard"

// appName is the app.kubernetes.io/name and component of the objects.
const appName = "tensorboard"

// Port is where TensorBoard listens, on the pod's loopback only; the
// activity sidecar proxies to it.
const Port = 6006

// ContainerName is the name of the TensorBoard container; the init
// container downloading logDir.http is DownloaderName.
const (
	ContainerName  = "tensorboard"
	DownloaderName = "download-logs"
)

// ObjectName returns the name of the Deployment and Service of the
// TensorBoard name (webroute.TensorBoardObjectName).
func ObjectName(name string) string { return webroute.TensorBoardObjectName(name) }

// URLPrefix returns the path the TensorBoard namespace/name is served at
// (webroute.TensorBoardPrefix).
func URLPrefix(namespace, name string) string { return webroute.TensorBoardPrefix(namespace, name) }

// URL returns the URL of the TensorBoard namespace/name, its status.url:
// URLPrefix on the gateway's host when gatewayHost is set, else on its
// Service.
func URL(gatewayHost, namespace, name string) string {
	prefix := URLPrefix(namespace, name)
	return webroute.StatusURL(gatewayHost, webroute.InClusterURL(namespace, ObjectName(name), prefix), prefix)
}
