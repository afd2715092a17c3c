// Package webroute is the contract between the controllers of the web
// workloads (Notebook, TensorBoard, Explorer, MLService) and the gateway in
// front of them: the path each workload is served at and the Service that
// serves it. Both sides derive names from here, so a route the gateway
// builds always lands on the Service the controller made. It is a leaf
// importing only the standard library.
package webroute

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// ClusterDomain is the DNS domain of the cluster's Services.
const ClusterDomain = "cluster.local"

// maxLabel is the length limit of a DNS-1035 label, a Service's name.
const maxLabel = 63

// ObjectName returns the name of an object of the workload name: name-kind,
// made a DNS-1035 label as a Service's name must be. A name that is one
// already, and short enough, is kept as it is; otherwise dots become
// dashes, a name that does not start with a letter gets an "x", and the
// name is cut, followed by 5 hex digits of a hash of the original name so
// that cut names stay apart.
func ObjectName(name, kind string) string {
	base := strings.ReplaceAll(name, ".", "-")
	if base == name && base != "" && base[0] >= 'a' && base[0] <= 'z' && len(name)+1+len(kind) <= maxLabel {
		return name + "-" + kind
	}
	if base == "" || base[0] < 'a' || base[0] > 'z' {
		base = "x" + base
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "-" + kind + "-" + hex.EncodeToString(sum[:])[:5]
	if maxLen := maxLabel - len(suffix); len(base) > maxLen {
		base = strings.TrimRight(base[:maxLen], "-")
	}
	return base + suffix
}

// URLPrefix returns the path a workload of kind is served at:
// /kind/<namespace>/<name>/ followed by the parts, each ending in a slash.
func URLPrefix(kind, namespace, name string, parts ...string) string {
	p := "/" + kind + "/" + namespace + "/" + name + "/"
	for _, s := range parts {
		p += s + "/"
	}
	return p
}

// UIDObjectName returns <name>-<kind>-<5 hex digits of a hash of uid>,
// made a DNS-1035 label as a Service's name must be: dots become dashes,
// a name that does not start with a letter gets an "x", and the name is
// cut to keep the whole within 63 characters. The objects of a deleted
// workload and of its successor of the same name never meet.
func UIDObjectName(name, kind, uid string) string {
	sum := sha256.Sum256([]byte(uid))
	suffix := "-" + kind + "-" + hex.EncodeToString(sum[:])[:5]
	base := strings.ReplaceAll(name, ".", "-")
	if base == "" || base[0] < 'a' || base[0] > 'z' {
		base = "x" + base
	}
	if maxLen := maxLabel - len(suffix); len(base) > maxLen {
		base = strings.TrimRight(base[:maxLen], "-")
	}
	return base + suffix
}

// InClusterURL returns the URL of path on port 80 of the Service name of
// namespace, as pods of the cluster reach it.
func InClusterURL(namespace, name, path string) string {
	return "http://" + name + "." + namespace + ".svc." + ClusterDomain + path
}

// NotebookPrefix returns the path a notebook serves its web UI under,
// ending in a slash: /t9k/notebooks/projects/<namespace>/name/<name>/. The
// notebook container's NB_PREFIX is this path without the slash.
func NotebookPrefix(namespace, name string) string {
	return "/t9k/notebooks/projects/" + namespace + "/name/" + name + "/"
}

// NotebookObjectName returns the name of the StatefulSet and the Service of
// the Notebook with uid: managed-notebook-<8 hex digits of a hash of the
// UID>. Names from the UID never meet a Service of the user's nor the
// objects of a deleted Notebook of the same name, and fit in a Service's 63
// characters whatever the Notebook's name.
func NotebookObjectName(uid string) string {
	sum := sha256.Sum256([]byte(uid))
	return "managed-notebook-" + hex.EncodeToString(sum[:])[:8]
}

// tensorBoardApp is the kind part of a TensorBoard's names and path.
const tensorBoardApp = "tensorboard"

// TensorBoardObjectName returns the name of the Deployment and Service of
// the TensorBoard name: <name>-tensorboard, cut and hashed when that is
// not a DNS-1035 label.
func TensorBoardObjectName(name string) string { return ObjectName(name, tensorBoardApp) }

// TensorBoardPrefix returns the path the TensorBoard namespace/name is
// served at: /tensorboard/<namespace>/<name>/. TensorBoard serves under it
// (--path_prefix), so the gateway routes it unchanged.
func TensorBoardPrefix(namespace, name string) string {
	return URLPrefix(tensorBoardApp, namespace, name)
}

// ExplorerComponent is a sub-workload of an Explorer.
type ExplorerComponent string

// The sub-workloads of an Explorer; each names its container and its URL's
// last part.
const (
	FileBrowser ExplorerComponent = "file-browser"
	CodeServer  ExplorerComponent = "code-server"
)

// ExplorerComponents are the sub-workloads, in the order they are
// reconciled.
var ExplorerComponents = []ExplorerComponent{FileBrowser, CodeServer}

// explorerApp is the kind part of an Explorer's names and paths.
const explorerApp = "explorer"

// ExplorerObjectName returns the name of the Deployment and Service of the
// component of the Explorer name: <name>-explorer-<component>, cut and
// hashed when that is not a DNS-1035 label.
func ExplorerObjectName(name string, c ExplorerComponent) string {
	return ObjectName(name, explorerApp+"-"+string(c))
}

// ExplorerInstanceName returns the name both components of the Explorer
// name share (their instance label).
func ExplorerInstanceName(name string) string { return ObjectName(name, explorerApp) }

// ExplorerPrefix returns the path the component of the Explorer
// namespace/name is served at: /explorer/<namespace>/<name>/<component>/.
// The file browser serves under it (--baseurl), so the gateway routes it
// unchanged; code-server serves at its root, with relative links, so the
// gateway strips the prefix for it (StripsPrefix).
func ExplorerPrefix(namespace, name string, c ExplorerComponent) string {
	return URLPrefix(explorerApp, namespace, name, string(c))
}

// StripsPrefix reports whether the gateway removes the component's prefix
// before proxying: the component serves at its root.
func (c ExplorerComponent) StripsPrefix() bool { return c == CodeServer }

// ExplorerURL returns the in-cluster URL of the component of the Explorer
// namespace/name: its Service, and the prefix unless the component serves
// at its root.
func ExplorerURL(namespace, name string, c ExplorerComponent) string {
	path := "/"
	if !c.StripsPrefix() {
		path = ExplorerPrefix(namespace, name, c)
	}
	return InClusterURL(namespace, ExplorerObjectName(name, c), path)
}

// EventListenerPrefix starts the path of an EventListener,
// /t9k/workflow/triggers/<namespace>/<listener>, which is also the source
// of the listener's events.
const EventListenerPrefix = "/t9k/workflow/triggers/"

// EventListenerPath returns the path the EventListener namespace/name is
// served at. The listener serves every path, so the gateway routes it
// unchanged.
func EventListenerPath(namespace, name string) string {
	return EventListenerPrefix + namespace + "/" + name
}

// EventListenerObjectName returns the name of the Deployment and Service
// of the EventListener name with uid: <name>-eventlistener-<5 hex digits>.
func EventListenerObjectName(name, uid string) string {
	return UIDObjectName(name, "eventlistener", uid)
}

// ExternalURL returns the URL of path on the gateway's host, or "" when no
// host is configured (the workload is reached in the cluster only).
func ExternalURL(host, path string) string {
	if host == "" {
		return ""
	}
	return "https://" + host + path
}

// ServingHost returns the host the gateway serves the Service name of
// namespace at: <name>.<namespace>.<domain>.
func ServingHost(domain, namespace, name string) string {
	return name + "." + namespace + "." + domain
}

// ServingURL returns the URL of the Service name of namespace through the
// gateway, or inCluster when no serving domain is configured.
func ServingURL(domain, namespace, name, inCluster string) string {
	if domain == "" {
		return inCluster
	}
	return "https://" + ServingHost(domain, namespace, name)
}

// StatusURL returns the URL a workload's status shows: path on the
// gateway's host when one is configured, else inCluster, the URL pods of
// the cluster reach it at.
func StatusURL(gatewayHost, inCluster, path string) string {
	if gatewayHost == "" {
		return inCluster
	}
	return ExternalURL(gatewayHost, path)
}
