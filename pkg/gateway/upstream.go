package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/webroute"
)

// group is the API group of the workloads.
const group = "tensorstack.dev"

// Upstream is where a route's requests go and what they carry there.
type Upstream struct {
	// Endpoints are the host:port of the ready pods behind the workload's
	// Service, at the port the Service's port targets: the gateway dials
	// pods, as ingress controllers do, and needs no kube-proxy.
	Endpoints []string
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
// yet: its Service or access Secret is not made (or the Secret is not the
// workload's), or no pod behind the Service is ready.
var ErrNotReady = errors.New("the workload is not ready")

// Resolver finds the upstreams of routes, reading the workloads, their
// Services, EndpointSlices and access Secrets from the API server, and
// keeps each for TTL. Only metadata of the workloads is read.
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
	return r.cache.load(ctx, keyOf(rt), func(ctx context.Context) (Upstream, error) { return r.resolve(ctx, rt) })
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
	u := Upstream{Resource: rt.Resource, Name: rt.Name}
	svc, err := r.service(ctx, rt.Namespace, service)
	if errors.Is(err, ErrNotFound) {
		return Upstream{}, fmt.Errorf("%w: its Service %s is not made yet", ErrNotReady, service)
	}
	if err != nil {
		return Upstream{}, err
	}
	if u.Endpoints, err = r.endpoints(ctx, svc); err != nil {
		return Upstream{}, err
	}
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
	svc, err := r.service(ctx, rt.Namespace, rt.Name)
	if err != nil {
		return Upstream{}, err
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
	endpoints, err := r.endpoints(ctx, svc)
	if err != nil {
		return Upstream{}, err
	}
	return Upstream{Endpoints: endpoints, Resource: resource, Name: ref.Name}, nil
}

// service reads the Service name of namespace: ErrNotFound when there is
// none.
func (r *Resolver) service(ctx context.Context, namespace, name string) (*corev1.Service, error) {
	svc := &corev1.Service{}
	err := r.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, svc)
	if apierrors.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading Service %s/%s: %w", namespace, name, err)
	}
	return svc, nil
}

// endpoints returns the host:port of the ready endpoints of svc's port
// named http, or its first port: the addresses of its EndpointSlices'
// ready endpoints, at the slice's port of that name. None is ErrNotReady.
func (r *Resolver) endpoints(ctx context.Context, svc *corev1.Service) ([]string, error) {
	if len(svc.Spec.Ports) == 0 {
		return nil, fmt.Errorf("%w: the Service %s has no port", ErrNotReady, svc.Name)
	}
	portName := svc.Spec.Ports[0].Name
	for _, p := range svc.Spec.Ports {
		if p.Name == "http" {
			portName = p.Name
		}
	}
	var slices discoveryv1.EndpointSliceList
	if err := r.reader.List(ctx, &slices, client.InNamespace(svc.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: svc.Name}); err != nil {
		return nil, fmt.Errorf("listing the endpoints of Service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	var out []string
	for _, s := range slices.Items {
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		var port int32
		for _, p := range s.Ports {
			if p.Port != nil && ptr.Deref(p.Name, "") == portName {
				port = *p.Port
			}
		}
		if port == 0 {
			continue
		}
		for _, ep := range s.Endpoints {
			if !ptr.Deref(ep.Conditions.Ready, true) || len(ep.Addresses) == 0 {
				continue
			}
			out = append(out, net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(port))))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the Service %s has no ready pod", ErrNotReady, svc.Name)
	}
	return out, nil
}
