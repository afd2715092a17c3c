package csis3

import (
	"context"

	"github.com/kubernetes-csi/csi-lib-utils/protosanitizer"
	"google.golang.org/grpc"
	"k8s.io/klog/v2"
)

// logGRPC logs every CSI call with its secrets stripped: the method at V(3)
// (probes at V(5)), payloads at V(5), and failures always.
func logGRPC(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	level := 3
	if info.FullMethod == "/csi.v1.Identity/Probe" {
		level = 5
	}
	log := klog.FromContext(ctx).WithValues("method", info.FullMethod)
	log.V(level).Info("CSI call")
	log.V(5).Info("CSI request", "request", protosanitizer.StripSecrets(req))
	resp, err := handler(ctx, req)
	if err != nil {
		log.Error(err, "CSI call failed")
		return resp, err
	}
	log.V(5).Info("CSI response", "response", protosanitizer.StripSecrets(resp))
	return resp, nil
}
