// Package csi is the csi-s3 CSI driver: it serves the CSI Identity,
// Controller and Node services over a unix socket for S3-backed volumes.
package csi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"k8s.io/klog/v2"
)

// DefaultDriverName is the CSI driver name StorageShim PVs refer to.
const DefaultDriverName = "s3.csi.tensorstack.dev"

// The modes the driver runs in.
const (
	ModeController = "controller"
	ModeNode       = "node"
	ModeAll        = "all"
)

// Config configures the driver.
type Config struct {
	// DriverName is the CSI driver name.
	DriverName string
	// Version is reported by GetPluginInfo.
	Version string
	// Mode is controller, node or all.
	Mode string
	// Endpoint is the gRPC endpoint, unix:///path/to/csi.sock.
	Endpoint string
	// NodeID identifies this node; required in node mode.
	NodeID string
}

// Validate checks the configuration, naming the flag at fault.
func (c Config) Validate() error {
	switch c.Mode {
	case ModeController, ModeNode, ModeAll:
	default:
		return fmt.Errorf("invalid value %q for flag --mode: must be one of %s, %s, %s", c.Mode, ModeController, ModeNode, ModeAll)
	}
	if c.DriverName == "" {
		return errors.New("flag --driver-name must not be empty")
	}
	if c.Mode != ModeController && c.NodeID == "" {
		return fmt.Errorf("flag --node-id is required with --mode=%s", c.Mode)
	}
	if _, err := SocketPath(c.Endpoint); err != nil {
		return fmt.Errorf("invalid value %q for flag --endpoint: %w", c.Endpoint, err)
	}
	return nil
}

// SocketPath returns the file path of a unix:// endpoint.
func SocketPath(endpoint string) (string, error) {
	path, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok {
		return "", errors.New("must start with unix://")
	}
	if !filepath.IsAbs(path) {
		return "", errors.New("must name an absolute socket path")
	}
	return filepath.Clean(path), nil
}

// Driver is the CSI driver.
type Driver struct {
	cfg Config
}

// New returns a driver for cfg.
func New(cfg Config) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Driver{cfg: cfg}, nil
}

// Run serves the driver's CSI services on its endpoint until ctx ends, then
// removes the socket.
func (d *Driver) Run(ctx context.Context) error {
	path, err := SocketPath(d.cfg.Endpoint)
	if err != nil {
		return err
	}
	l, err := listenUnix(path)
	if err != nil {
		return err
	}
	defer os.Remove(path)

	srv := grpc.NewServer(grpc.UnaryInterceptor(logGRPC))
	csipb.RegisterIdentityServer(srv, &identityServer{cfg: d.cfg})

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	klog.FromContext(ctx).Info("Serving CSI", "driver", d.cfg.DriverName, "mode", d.cfg.Mode, "endpoint", d.cfg.Endpoint)
	select {
	case err := <-errc:
		return fmt.Errorf("serving CSI on %s: %w", path, err)
	case <-ctx.Done():
		srv.GracefulStop()
		return nil
	}
}

// listenUnix listens on a unix socket at path that only its owner and group
// can use, replacing a stale socket left by an earlier run.
func listenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("creating socket directory: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("removing stale socket %s: %w", path, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		l.Close()
		return nil, fmt.Errorf("restricting socket %s: %w", path, err)
	}
	return l, nil
}
