package gateway

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the gateway's Prometheus metrics.
type Metrics struct {
	requests *prometheus.CounterVec
}

// NewMetrics returns the metrics, registered with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{requests: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "accelstack_gateway_requests_total",
		Help: "Requests to workloads by the kind of workload (empty when none was routed; kubernetes for the Kubernetes API) and the status code answered.",
	}, []string{"resource", "code"})}
	reg.MustRegister(m.requests)
	return m
}

// observe counts a request; nil counts nothing.
func (m *Metrics) observe(resource Resource, code int) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(string(resource), strconv.Itoa(code)).Inc()
}
