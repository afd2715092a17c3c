package interactive

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ObjectName returns the name of an object of the workload name: name-kind,
// made a DNS-1035 label as a Service's name must be. A name that is one
// already, and short enough, is kept as it is; otherwise dots become
// dashes, a name that does not start with a letter gets an "x", and the
// name is cut, followed by 5 hex digits of a hash of the original name so
// that cut names stay apart.
func ObjectName(name, kind string) string {
	base := strings.ReplaceAll(name, ".", "-")
	if base == name && base != "" && base[0] >= 'a' && base[0] <= 'z' && len(name)+1+len(kind) <= validation.DNS1035LabelMaxLength {
		return name + "-" + kind
	}
	if base == "" || base[0] < 'a' || base[0] > 'z' {
		base = "x" + base
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "-" + kind + "-" + hex.EncodeToString(sum[:])[:5]
	if maxLen := validation.DNS1035LabelMaxLength - len(suffix); len(base) > maxLen {
		base = strings.TrimRight(base[:maxLen], "-")
	}
	return base + suffix
}

// URLPrefix returns the path a workload of kind is served at: /kind/<namespace>/<name>/
// followed by the parts, each ending in a slash.
func URLPrefix(kind, namespace, name string, parts ...string) string {
	p := "/" + kind + "/" + namespace + "/" + name + "/"
	for _, s := range parts {
		p += s + "/"
	}
	return p
}

// InClusterURL returns the URL of path on port 80 of the Service name of
// namespace, as pods of the cluster reach it.
func InClusterURL(namespace, name, path string) string {
	return "http://" + name + "." + namespace + ".svc." + ClusterDomain + path
}

// ClusterDomain is the DNS domain of the cluster's Services.
const ClusterDomain = "cluster.local"

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
