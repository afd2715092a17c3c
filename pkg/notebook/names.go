package notebook

import (
	"crypto/sha256"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/types"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// NotebookLabelKey is the label, on a Notebook's StatefulSet, Services and
// pod, whose value is ObjectName: it selects the pod and restricts the
// controller's cache.
const NotebookLabelKey = "tensorstack.dev/notebook"

// ObjectName returns the name of the StatefulSet and the Service of the
// Notebook with uid: managed-notebook-<8 hex digits of a hash of the UID>.
// Names from the UID never meet a Service of the user's nor the objects
// of a deleted Notebook of the same name, and fit in a Service's 63
// characters whatever the Notebook's name.
func ObjectName(uid types.UID) string {
	sum := sha256.Sum256([]byte(uid))
	return "managed-notebook-" + hex.EncodeToString(sum[:])[:8]
}

// PodName returns the name of the pod of the StatefulSet name.
func PodName(name string) string { return name + "-0" }

// SSHServiceName returns the name of the SSH Service of the StatefulSet
// name.
func SSHServiceName(name string) string { return name + "-ssh" }

// URLPrefix returns the path a notebook serves its web UI under, ending in
// a slash: /t9k/notebooks/projects/<namespace>/name/<name>/. The notebook
// container's NB_PREFIX is this path without the slash.
func URLPrefix(namespace, name string) string {
	return "/t9k/notebooks/projects/" + namespace + "/name/" + name + "/"
}

// URL returns the in-cluster URL of the notebook's web UI: its Service and
// URLPrefix.
func URL(nb *tensorstackv1beta1.Notebook) string {
	return interactive.InClusterURL(nb.Namespace, ObjectName(nb.UID), URLPrefix(nb.Namespace, nb.Name))
}

// objectLabels returns the labels of the objects named name of the
// Notebook nb with component: NotebookLabelKey and the app.kubernetes.io
// labels (interactive.AppLabels).
func objectLabels(nb *tensorstackv1beta1.Notebook, name, component string) map[string]string {
	l := interactive.AppLabels("notebook", nb.Name, component)
	l[NotebookLabelKey] = name
	return l
}
