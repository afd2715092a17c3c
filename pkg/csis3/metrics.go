package csis3

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// operationsSeconds is csi-lib-utils' plugin histogram under the same name,
// help, labels and buckets, so dashboards for other CSI drivers work.
type operationsSeconds struct {
	driver string
	hist   *prometheus.HistogramVec
}

// newOperationsSeconds registers csi_plugin_operations_seconds with reg.
func newOperationsSeconds(driver string, reg prometheus.Registerer) (*operationsSeconds, error) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: "csi_plugin",
		Name:      "operations_seconds",
		Help:      "Container Storage Interface operation duration with gRPC error code status total",
		Buckets:   []float64{.1, .25, .5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600},
	}, []string{"driver_name", "method_name", "grpc_status_code"})
	if err := reg.Register(h); err != nil {
		return nil, err
	}
	return &operationsSeconds{driver: driver, hist: h}, nil
}

// intercept observes each call's duration and status code.
func (m *operationsSeconds) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := handler(ctx, req)
	m.hist.WithLabelValues(m.driver, info.FullMethod, status.Code(err).String()).Observe(time.Since(start).Seconds())
	return resp, err
}

// newPendingUploads registers accelstack_csi_s3_pending_uploads with reg:
// per volume being unstaged, the files written through its mount that its
// daemon has not uploaded yet, as the last poll counted them. A volume
// whose count does not fall is one that unstaging keeps, and its files.
func newPendingUploads(reg prometheus.Registerer) (*prometheus.GaugeVec, error) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "accelstack_csi_s3_pending_uploads",
		Help: "Files of a volume being unstaged that its FUSE daemon has not uploaded yet; unstaging waits for them.",
	}, []string{"volume_id"})
	if err := reg.Register(g); err != nil {
		return nil, err
	}
	return g, nil
}
