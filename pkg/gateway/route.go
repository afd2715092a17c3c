package gateway

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/accelstack/accelstack/pkg/webroute"
)

// Resource names the kind of workload a route leads to, as its resource
// of group tensorstack.dev: authorization asks for its proxy subresource.
type Resource string

// The workloads the gateway serves.
const (
	Notebooks        Resource = "notebooks"
	TensorBoards     Resource = "tensorboards"
	Explorers        Resource = "explorers"
	EventListeners   Resource = "eventlisteners"
	MLServices       Resource = "mlservices"
	SimpleMLServices Resource = "simplemlservices"
	// Serving is a route by host to a serving Service, whose owner (an
	// MLService or a SimpleMLService) is learnt from the Service.
	Serving Resource = "serving"
)

// Route is where a request goes: a workload, and the path to ask it for.
type Route struct {
	Resource  Resource
	Namespace string
	// Name is the workload's; for Serving, the Service's.
	Name string
	// Component is the Explorer's sub-workload.
	Component webroute.ExplorerComponent
	// Path is the path to send upstream: the request's, or what follows
	// the prefix when the workload serves at its root.
	Path string
}

// Public reports whether the route needs no login: an EventListener
// authenticates its senders itself (its HMAC or token secret), as the
// webhooks of Git hosts cannot log in.
func (r Route) Public() bool { return r.Resource == EventListeners }

// ErrNoRoute is returned for a request no workload is served at.
var ErrNoRoute = errors.New("no workload is served here")

// BadPathError is a request path the gateway refuses to route: one that
// would escape its prefix, or names no valid namespace or workload.
type BadPathError struct{ Reason string }

func (e *BadPathError) Error() string { return "bad path: " + e.Reason }

// Router maps requests to routes: the paths of webroute on Host, and the
// serving hosts <service>.<namespace>.<ServingDomain>
// (webroute.ServingHost).
type Router struct {
	// Host is the gateway's host, with an optional port that routing
	// ignores; empty accepts path routes on any host that is not a
	// serving host.
	Host string
	// ServingDomain is the domain of serving hosts; empty serves none.
	ServingDomain string
}

// Route returns the route of r, ErrNoRoute, or a *BadPathError.
func (rt Router) Route(r *http.Request) (Route, error) {
	host := hostOnly(r.Host)
	if rt.ServingDomain != "" {
		if sub, ok := strings.CutSuffix(host, "."+rt.ServingDomain); ok {
			return servingRoute(sub, r.URL.Path)
		}
	}
	if rt.Host != "" && !strings.EqualFold(host, hostOnly(rt.Host)) {
		return Route{}, ErrNoRoute
	}
	if err := checkPath(r); err != nil {
		return Route{}, err
	}
	return pathRoute(r.URL.Path)
}

// hostOnly returns the host of a Host header, without its port, lower
// case.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		hostport = h
	}
	return strings.ToLower(hostport)
}

// checkPath refuses a path with dot segments, empty segments or encoded
// slashes or backslashes: each could make the workload see a path outside
// the prefix the route was authorized for.
func checkPath(r *http.Request) error {
	p := r.URL.Path
	if !strings.HasPrefix(p, "/") {
		return &BadPathError{"the path is not absolute"}
	}
	raw := strings.ToLower(r.URL.RawPath)
	if strings.Contains(raw, "%2f") || strings.Contains(raw, "%5c") || strings.Contains(p, "\\") {
		return &BadPathError{"the path has an encoded slash or a backslash"}
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	if clean != p {
		return &BadPathError{"the path has dot or empty segments"}
	}
	return nil
}

// pathRoute routes the path routes of webroute.
func pathRoute(p string) (Route, error) {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	at := func(i int) string {
		if i < len(parts) {
			return parts[i]
		}
		return ""
	}
	var rt Route
	var n int // the segments of the prefix
	switch {
	case at(0) == "t9k" && at(1) == "notebooks" && at(2) == "projects" && at(4) == "name":
		rt, n = Route{Resource: Notebooks, Namespace: at(3), Name: at(5)}, 6
	case at(0) == "t9k" && at(1) == "workflow" && at(2) == "triggers":
		rt, n = Route{Resource: EventListeners, Namespace: at(3), Name: at(4)}, 5
	case at(0) == "tensorboard":
		rt, n = Route{Resource: TensorBoards, Namespace: at(1), Name: at(2)}, 3
	case at(0) == "explorer":
		c := webroute.ExplorerComponent(at(3))
		if c != webroute.FileBrowser && c != webroute.CodeServer {
			return Route{}, ErrNoRoute
		}
		rt, n = Route{Resource: Explorers, Namespace: at(1), Name: at(2), Component: c}, 4
	default:
		return Route{}, ErrNoRoute
	}
	if len(parts) < n {
		return Route{}, ErrNoRoute
	}
	if err := checkNames(rt.Namespace, rt.Name); err != nil {
		return Route{}, err
	}
	rt.Path = p
	if rt.Component.StripsPrefix() {
		rt.Path = "/" + strings.Join(parts[n:], "/")
	}
	return rt, nil
}

// servingRoute routes the serving host <service>.<namespace> of the
// serving domain.
func servingRoute(sub, p string) (Route, error) {
	name, ns, ok := strings.Cut(sub, ".")
	if !ok || strings.Contains(ns, ".") {
		return Route{}, ErrNoRoute
	}
	if err := checkNames(ns, name); err != nil {
		return Route{}, err
	}
	if !strings.HasPrefix(p, "/") {
		return Route{}, &BadPathError{"the path is not absolute"}
	}
	return Route{Resource: Serving, Namespace: ns, Name: name, Path: p}, nil
}

// checkNames refuses a namespace that is not a DNS-1123 label and a
// workload name that is not a DNS-1123 subdomain: no object has them.
func checkNames(namespace, name string) error {
	if msgs := validation.IsDNS1123Label(namespace); len(msgs) > 0 {
		return &BadPathError{fmt.Sprintf("namespace %q: %s", namespace, strings.Join(msgs, "; "))}
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return &BadPathError{fmt.Sprintf("name %q: %s", name, strings.Join(msgs, "; "))}
	}
	return nil
}
