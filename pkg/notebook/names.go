package notebook

import (
	"k8s.io/apimachinery/pkg/types"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/webroute"
)

// NotebookLabelKey is the label, on a Notebook's StatefulSet, Services and
// pod, whose value is ObjectName: it selects the pod and restricts the
// controller's cache.
const NotebookLabelKey = "tensorstack.dev/notebook"

// ObjectName returns the name of the StatefulSet and the Service of the
// Notebook with uid (webroute.NotebookObjectName).
func ObjectName(uid types.UID) string { return webroute.NotebookObjectName(string(uid)) }

// PodName returns the name of the pod of the StatefulSet name.
func PodName(name string) string { return name + "-0" }

// SSHServiceName returns the name of the SSH Service of the StatefulSet
// name.
func SSHServiceName(name string) string { return name + "-ssh" }

// URLPrefix returns the path a notebook serves its web UI under
// (webroute.NotebookPrefix); the notebook container's NB_PREFIX is this
// path without its final slash.
func URLPrefix(namespace, name string) string { return webroute.NotebookPrefix(namespace, name) }

// URL returns the URL of the notebook's web UI, its status.url: URLPrefix
// on the gateway's host when gatewayHost is set, else on its Service.
func URL(gatewayHost string, nb *tensorstackv1beta1.Notebook) string {
	prefix := URLPrefix(nb.Namespace, nb.Name)
	return webroute.StatusURL(gatewayHost, webroute.InClusterURL(nb.Namespace, ObjectName(nb.UID), prefix), prefix)
}

// objectLabels returns the labels of the objects named name of the
// Notebook nb with component: NotebookLabelKey and the app.kubernetes.io
// labels (interactive.AppLabels).
func objectLabels(nb *tensorstackv1beta1.Notebook, name, component string) map[string]string {
	l := interactive.AppLabels("notebook", nb.Name, component)
	l[NotebookLabelKey] = name
	return l
}
