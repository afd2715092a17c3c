// Package dns is the local cluster's DNS server: the records of the
// Kubernetes DNS specification that workloads use, answered from the
// Services and EndpointSlices it watches, and every other name forwarded to
// the host's resolvers.
//
// It answers A queries for <service>.<namespace>.svc.<domain> (the
// ClusterIP, or for a headless Service the addresses of its endpoints) and
// <hostname>.<service>.<namespace>.svc.<domain> (the endpoint with that
// hostname); AAAA and other types of a known name get an empty answer, and
// an unknown name under the domain NXDOMAIN. The kubelet points pods at it
// (clusterDNS), so that replicas find each other by their Services' names
// as they do on any cluster. It is separate from package cluster because it
// runs as a process of its own (test/cmd/clusterdns) that outlives
// `cluster up`, like the other cluster components.
package dns
