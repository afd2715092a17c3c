package csis3

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
	"k8s.io/klog/v2"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// registrationServer implements the kubelet plugin-registration API, so
// the kubelet's plugin watcher registers the driver without a
// node-driver-registrar sidecar: it finds the socket in its plugins
// registry directory, calls GetInfo, then NotifyRegistrationStatus.
type registrationServer struct {
	registerapi.UnimplementedRegistrationServer
	driverName string
	// endpoint is the CSI socket's path as the kubelet sees it on the host.
	endpoint string
}

var _ registerapi.RegistrationServer = (*registrationServer)(nil)

// GetInfo describes the driver as a CSI plugin.
func (s *registrationServer) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              s.driverName,
		Endpoint:          s.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

// NotifyRegistrationStatus logs the kubelet's verdict; a refusal at error
// level.
func (s *registrationServer) NotifyRegistrationStatus(ctx context.Context, st *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	log := klog.FromContext(ctx).WithValues("driver", s.driverName, "endpoint", s.endpoint)
	if st.GetPluginRegistered() {
		log.Info("Registered with the kubelet")
	} else {
		log.Error(errors.New(st.GetError()), "The kubelet refused the plugin registration")
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}

// registrar serves the registration API on <dir>/<driver>-reg.sock.
type registrar struct {
	srv  *grpc.Server
	l    net.Listener
	path string
}

// registrationSocket is the registration socket's path for cfg.
func registrationSocket(cfg Config) string {
	return filepath.Join(cfg.PluginRegistrationDir, cfg.DriverName+"-reg.sock")
}

// listenRegistration creates the registration socket, owner-only, in place
// of a stale one.
func listenRegistration(cfg Config) (*registrar, error) {
	path := registrationSocket(cfg)
	l, err := listenUnix(path, 0o600)
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer()
	registerapi.RegisterRegistrationServer(srv, &registrationServer{driverName: cfg.DriverName, endpoint: cfg.RegistrationEndpoint()})
	return &registrar{srv: srv, l: l, path: path}, nil
}

// serve serves until stop; it returns nil after stop.
func (r *registrar) serve() error {
	if err := r.srv.Serve(r.l); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serving plugin registration on %s: %w", r.path, err)
	}
	return nil
}

// stop removes the socket, so the kubelet deregisters the driver, and
// stops the server. Stopping twice is harmless.
func (r *registrar) stop() {
	_ = os.Remove(r.path)
	r.srv.Stop()
}
