// Package kubeapi holds what the gateway needs to pass Kubernetes API
// requests on as their user: the attributes RBAC judges a request by, read
// from its method and path as the API server reads them, and the check of
// those attributes against the rules of an API key's scopes.
package kubeapi

import (
	"net/http"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Attributes are what RBAC judges a request by.
type Attributes struct {
	// Resource is false for a path that names no resource (discovery,
	// /version, /openapi).
	Resource bool
	// Path is the request's path, for a request that names no resource.
	Path                                            string
	Verb, Group, Kind, Subresource, Namespace, Name string
}

// Read returns the attributes of an API request with method and path (the
// path as the API server gets it, from /api or /apis on) and query watch.
func Read(method, path string, watch bool) Attributes {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	a := Attributes{Path: path, Verb: nonResourceVerb(method)}
	var rest []string
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		rest = segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		a.Group, rest = segs[1], segs[3:]
	default:
		return a
	}
	a.Resource = true
	if rest[0] == "namespaces" && len(rest) >= 3 {
		a.Namespace, rest = rest[1], rest[2:]
	}
	a.Kind = rest[0]
	if len(rest) > 1 {
		a.Name = rest[1]
	}
	if len(rest) > 2 {
		a.Subresource = rest[2]
	}
	if a.Kind == "namespaces" && a.Name != "" && a.Subresource == "" {
		// A namespace is its own namespace for RBAC.
		a.Namespace = a.Name
	}
	a.Verb = resourceVerb(method, a.Name != "", watch)
	return a
}

// nonResourceVerb is the verb of a request that names no resource.
func nonResourceVerb(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPost:
		return "post"
	case http.MethodPut:
		return "put"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return strings.ToLower(method)
}

// resourceVerb is the verb of a resource request, as the API server names
// it.
func resourceVerb(method string, named, watch bool) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case watch:
			return "watch"
		case named:
			return "get"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if named {
			return "delete"
		}
		return "deletecollection"
	}
	return strings.ToLower(method)
}

// Allowed reports whether one of rules grants a.
func Allowed(rules []rbacv1.PolicyRule, a Attributes) bool {
	for _, r := range rules {
		if ruleAllows(r, a) {
			return true
		}
	}
	return false
}

// ruleAllows reports whether r grants a, by the RBAC authorizer's rules:
// "*" matches any verb, group or resource, "*/sub" any resource's
// subresource sub, and resource names, when listed, bound requests that
// name their object.
func ruleAllows(r rbacv1.PolicyRule, a Attributes) bool {
	if !matches(r.Verbs, a.Verb) {
		return false
	}
	if !a.Resource {
		return matchesPath(r.NonResourceURLs, a.Path)
	}
	if !matches(r.APIGroups, a.Group) {
		return false
	}
	res := a.Kind
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	ok := false
	for _, x := range r.Resources {
		if x == rbacv1.ResourceAll || x == res || (a.Subresource != "" && x == "*/"+a.Subresource) {
			ok = true
			break
		}
	}
	if !ok {
		return false
	}
	return len(r.ResourceNames) == 0 || (a.Name != "" && matches(r.ResourceNames, a.Name))
}

// matches reports whether want is in list or list holds "*".
func matches(list []string, want string) bool {
	for _, x := range list {
		if x == "*" || x == want {
			return true
		}
	}
	return false
}

// matchesPath matches a path against non-resource URLs, which may end in
// "*" for a prefix.
func matchesPath(urls []string, path string) bool {
	for _, u := range urls {
		if u == "*" || u == path || (strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimSuffix(u, "*"))) {
			return true
		}
	}
	return false
}
