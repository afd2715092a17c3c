package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/webroute"
)

// group is the API group of the workloads.
const group = "tensorstack.dev"

// Upstream is where a route's requests go and what they carry there.
type Upstream struct {
	// URL is the scheme and host of the workload's Service.
	URL *url.URL
	// Token is the workload's access token (activity.AccessCookie), ""
	// for workloads without an activity sidecar.
	Token string
	// Resource and Name are the object authorization is asked about: the
	// workload, or the owner of a serving Service.
	Resource Resource
	Name     string
}

// ErrNotFound is returned when the route's workload does not exist.
var ErrNotFound = errors.New("no such workload")

// ErrNotReady is returned when the workload exists but cannot be reached
// yet: its access Secret is not made, or its Service has no port.
var ErrNotReady = errors.New("the workload is not ready")

// Resolver finds the upstreams of routes, reading the workloads, their
// access Secrets and serving Services from the API server, and keeps each
// for TTL. Only metadata of the workloads is read.
type Resolver struct {
	reader client.Reader
	cache  *ttlCache[upstreamKey, Upstream]
}

// upstreamKey is a route without its path.
type upstreamKey struct {
	resource        Resource
	namespace, name string
	component       webroute.ExplorerComponent
}

// NewResolver returns a Resolver reading with reader, an uncached client:
// the gateway watches nothing.
func NewResolver(reader client.Reader, ttl time.Duration, size int) *Resolver {
	return &Resolver{reader: reader, cache: newTTLCache[upstreamKey, Upstream](ttl, size)}
}

// keyOf returns the cache key of rt.
func keyOf(rt Route) upstreamKey {
	return upstreamKey{rt.Resource, rt.Namespace, rt.Name, rt.Component}
}

// Forget drops the upstream of rt from the cache, after a connection to
// it failed: the workload may have been recreated with new names.
func (r *Resolver) Forget(rt Route) { r.cache.delete(keyOf(rt)) }

// Resolve returns the upstream of rt: ErrNotFound, ErrNotReady or an API
// error when there is none.
func (r *Resolver) Resolve(ctx context.Context, rt Route) (Upstream, error) {
	key := keyOf(rt)
	if u, ok := r.cache.get(key); ok {
		return u, nil
	}
	u, err := r.resolve(ctx, rt)
	if err != nil {
		return Upstream{}, err
	}
	r.cache.put(key, u)
	return u, nil
}

// resolve reads what Resolve caches.
func (r *Resolver) resolve(ctx context.Context, rt Route) (Upstream, error) {
	if rt.Resource == Serving {
		return r.serving(ctx, rt)
	}
	owner, err := r.workload(ctx, rt)
	if err != nil {
		return Upstream{}, err
	}
	var service string
	switch rt.Resource {
	case Notebooks:
		service = webroute.NotebookObjectName(string(owner.UID))
	case TensorBoards:
		service = webroute.TensorBoardObjectName(rt.Name)
	case Explorers:
		service = webroute.ExplorerObjectName(rt.Name, rt.Component)
	case EventListeners:
		service = webroute.EventListenerObjectName(rt.Name, string(owner.UID))
	default:
		return Upstream{}, fmt.Errorf("%w: unknown resource %q", ErrNotFound, rt.Resource)
	}
	u := Upstream{URL: serviceURL(rt.Namespace, service, webroute.ServicePort), Resource: rt.Resource, Name: rt.Name}
	if rt.Resource != EventListeners {
		if u.Token, err = r.accessToken(ctx, owner, service); err != nil {
			return Upstream{}, err
		}
	}
	return u, nil
}

// workload reads the metadata of the route's workload.
func (r *Resolver) workload(ctx context.Context, rt Route) (*metav1.PartialObjectMetadata, error) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1beta1", Kind: kindOf[rt.Resource]})
	err := r.reader.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: rt.Name}, obj)
	if apierrors.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", rt.Resource, rt.Namespace, rt.Name, err)
	}
	return obj, nil
}

// kindOf maps the routed resources to their kinds.
var kindOf = map[Resource]string{
	Notebooks:        "Notebook",
	TensorBoards:     "TensorBoard",
	Explorers:        "Explorer",
	EventListeners:   "EventListener",
	MLServices:       "MLService",
	SimpleMLServices: "SimpleMLService",
}

// accessToken returns the token of the access Secret of the workload
// child service, which must be controlled by owner: a Secret of that name
// someone else made is never sent anywhere.
func (r *Resolver) accessToken(ctx context.Context, owner *metav1.PartialObjectMetadata, service string) (string, error) {
	token, err := interactive.AccessToken(ctx, r.reader, owner, service)
	if errors.Is(err, interactive.ErrNoAccessSecret) || errors.Is(err, interactive.ErrNotOwned) {
		return "", fmt.Errorf("%w: %w", ErrNotReady, err)
	}
	return token, err
}

// serving resolves a serving host: the Service of its name, which an
// MLService or a SimpleMLService of tensorstack.dev must control, on its
// port named http, or its first port.
func (r *Resolver) serving(ctx context.Context, rt Route) (Upstream, error) {
	svc := &corev1.Service{}
	err := r.reader.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: rt.Name}, svc)
	if apierrors.IsNotFound(err) {
		return Upstream{}, ErrNotFound
	}
	if err != nil {
		return Upstream{}, fmt.Errorf("reading Service %s/%s: %w", rt.Namespace, rt.Name, err)
	}
	ref := metav1.GetControllerOf(svc)
	if ref == nil {
		return Upstream{}, ErrNotFound
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != group {
		return Upstream{}, ErrNotFound
	}
	var resource Resource
	switch ref.Kind {
	case kindOf[MLServices]:
		resource = MLServices
	case kindOf[SimpleMLServices]:
		resource = SimpleMLServices
	default:
		return Upstream{}, ErrNotFound
	}
	if len(svc.Spec.Ports) == 0 {
		return Upstream{}, fmt.Errorf("%w: the Service %s has no port", ErrNotReady, rt.Name)
	}
	port := svc.Spec.Ports[0].Port
	for _, p := range svc.Spec.Ports {
		if p.Name == "http" {
			port = p.Port
		}
	}
	return Upstream{URL: serviceURL(rt.Namespace, rt.Name, int(port)), Resource: resource, Name: ref.Name}, nil
}

// serviceURL returns the http URL of port of the Service name of
// namespace.
func serviceURL(namespace, name string, port int) *url.URL {
	return &url.URL{Scheme: "http", Host: net.JoinHostPort(webroute.ServiceHost(namespace, name), strconv.Itoa(port))}
}
