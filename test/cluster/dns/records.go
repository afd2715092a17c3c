package dns

import (
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
)

// Records looks names up in the cluster's Services and EndpointSlices.
type Records struct {
	// Domain is the cluster domain, e.g. cluster.local.
	Domain    string
	Services  corelisters.ServiceLister
	Endpoints discoverylisters.EndpointSliceLister
}

// Lookup returns the IPv4 addresses of name (absolute or not, any case).
// inDomain says whether name is under the cluster domain, found whether it
// names a Service or an endpoint of one; a headless Service with no
// endpoint yet is found with no address.
func (r *Records) Lookup(name string) (addrs []netip.Addr, inDomain, found bool, err error) {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	domain := strings.Trim(strings.ToLower(r.Domain), ".")
	if name != domain && !strings.HasSuffix(name, "."+domain) {
		return nil, false, false, nil
	}
	suffix := ".svc." + domain
	if !strings.HasSuffix(name, suffix) {
		return nil, true, false, nil
	}
	labels := strings.Split(strings.TrimSuffix(name, suffix), ".")
	var hostname string
	switch len(labels) {
	case 2:
	case 3:
		hostname, labels = labels[0], labels[1:]
	default:
		return nil, true, false, nil
	}
	svcName, ns := labels[0], labels[1]
	svc, err := r.Services.Services(ns).Get(svcName)
	if apierrors.IsNotFound(err) {
		return nil, true, false, nil
	}
	if err != nil {
		return nil, true, false, err
	}
	if hostname == "" && svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		// An IPv6 ClusterIP has no A record.
		if a, perr := netip.ParseAddr(svc.Spec.ClusterIP); perr == nil && a.Is4() {
			return []netip.Addr{a}, true, true, nil
		}
		return nil, true, true, nil
	}
	addrs, found, err = r.endpoints(svc, hostname)
	return addrs, true, found, err
}

// endpoints returns the ready (or, with publishNotReadyAddresses, all)
// IPv4 endpoint addresses of svc, only those of the endpoint named
// hostname if it is set.
func (r *Records) endpoints(svc *corev1.Service, hostname string) ([]netip.Addr, bool, error) {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name})
	slices, err := r.Endpoints.EndpointSlices(svc.Namespace).List(sel)
	if err != nil {
		return nil, false, err
	}
	seen := map[netip.Addr]bool{}
	var addrs []netip.Addr
	found := hostname == ""
	for _, s := range slices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		for _, ep := range s.Endpoints {
			if hostname != "" && (ep.Hostname == nil || *ep.Hostname != hostname) {
				continue
			}
			found = true
			if !svc.Spec.PublishNotReadyAddresses && ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				if ip, err := netip.ParseAddr(a); err == nil && !seen[ip] {
					seen[ip] = true
					addrs = append(addrs, ip)
				}
			}
		}
	}
	return addrs, found, nil
}
