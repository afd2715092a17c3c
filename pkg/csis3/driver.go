package csis3

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"k8s.io/klog/v2"
	"k8s.io/mount-utils"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
	"github.com/accelstack/accelstack/pkg/unixsock"
)

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
	// StateDir holds what the node mounted (records, credential files,
	// caches, daemon logs); it must survive plugin restarts.
	StateDir string
	// DefaultMounter is the mounter of volumes that name none.
	DefaultMounter string
	// RcloneBinary and S3fsBinary are the mounters' executables.
	RcloneBinary, S3fsBinary string
	// Systemd is auto, true or false: run FUSE daemons as transient
	// systemd units on the host, or in their own session.
	Systemd string
	// MountTimeout bounds the wait for a FUSE mount to appear.
	MountTimeout time.Duration
	// UnstageTimeout bounds the wait, after unmounting, for a FUSE daemon
	// to finish uploading and exit before it is killed.
	UnstageTimeout time.Duration
	// DaemonMemoryMax is systemd's MemoryMax= for each FUSE daemon's
	// unit, e.g. 2G; none when empty. Only FUSE daemons run as systemd
	// units are limited.
	DaemonMemoryMax string
	// DaemonCgroupRoot, when set and systemd is not used, is where the
	// host's cgroup hierarchies are mounted in the plugin (e.g.
	// /host/sys/fs/cgroup); each FUSE daemon is moved into the cgroup
	// DaemonCgroupName under every hierarchy's root, out of the plugin
	// container's cgroup, so it outlives the container.
	DaemonCgroupRoot string
	// MetricsAddress serves /metrics when not empty, e.g. ":9808".
	MetricsAddress string
	// PluginRegistrationDir, when set, is the kubelet's plugin registry
	// directory (host /var/lib/kubelet/plugins_registry) as mounted in the
	// plugin; the driver serves the kubelet plugin-registration API on
	// <dir>/<DriverName>-reg.sock there. Node and all modes only.
	PluginRegistrationDir string
	// KubeletRegistrationPath is the CSI socket's path on the host, which
	// registration hands to the kubelet; empty means
	// /var/lib/kubelet/plugins/<DriverName>/csi.sock.
	KubeletRegistrationPath string
}

// RegistrationEndpoint is the CSI socket's path on the host that plugin
// registration reports: KubeletRegistrationPath, or its default.
func (c Config) RegistrationEndpoint() string {
	if c.KubeletRegistrationPath != "" {
		return c.KubeletRegistrationPath
	}
	return "/var/lib/kubelet/plugins/" + c.DriverName + "/csi.sock"
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
	if c.Mode != ModeController && c.StateDir == "" {
		return fmt.Errorf("flag --state-dir is required with --mode=%s", c.Mode)
	}
	switch c.DefaultMounter {
	case MounterRclone, MounterS3fs:
	default:
		return fmt.Errorf("invalid value %q for flag --default-mounter: must be %s or %s", c.DefaultMounter, MounterRclone, MounterS3fs)
	}
	switch c.Systemd {
	case "auto", "true", "false":
	default:
		return fmt.Errorf("invalid value %q for flag --systemd: must be auto, true or false", c.Systemd)
	}
	if c.MountTimeout <= 0 {
		return fmt.Errorf("flag --mount-timeout must be positive")
	}
	if c.UnstageTimeout <= 0 {
		return fmt.Errorf("flag --unstage-timeout must be positive")
	}
	if _, err := SocketPath(c.Endpoint); err != nil {
		return fmt.Errorf("invalid value %q for flag --endpoint: %w", c.Endpoint, err)
	}
	if c.PluginRegistrationDir != "" {
		if c.Mode == ModeController {
			return fmt.Errorf("flag --plugin-registration-dir needs --mode=%s or %s", ModeNode, ModeAll)
		}
		if !filepath.IsAbs(c.PluginRegistrationDir) {
			return fmt.Errorf("invalid value %q for flag --plugin-registration-dir: must be absolute", c.PluginRegistrationDir)
		}
	}
	if c.KubeletRegistrationPath != "" && !filepath.IsAbs(c.KubeletRegistrationPath) {
		return fmt.Errorf("invalid value %q for flag --kubelet-registration-path: must be absolute", c.KubeletRegistrationPath)
	}
	if c.DaemonMemoryMax != "" && !memoryMaxRE.MatchString(c.DaemonMemoryMax) {
		return fmt.Errorf("invalid value %q for flag --daemon-memory-max: want bytes with an optional K, M, G or T suffix, a percentage, or infinity", c.DaemonMemoryMax)
	}
	if c.DaemonCgroupRoot != "" && !filepath.IsAbs(c.DaemonCgroupRoot) {
		return fmt.Errorf("invalid value %q for flag --daemon-cgroup-root: must be absolute", c.DaemonCgroupRoot)
	}
	return nil
}

// memoryMaxRE matches the values of systemd's MemoryMax=.
var memoryMaxRE = regexp.MustCompile(`^([0-9]+[KMGT]?|[0-9]{1,2}(\.[0-9]+)?%|100%|infinity)$`)

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

// DefaultConfig returns a configuration with every optional field set to
// its default.
func DefaultConfig() Config {
	return Config{
		DriverName:     s3volume.DefaultDriverName,
		Mode:           ModeAll,
		Endpoint:       "unix:///csi/csi.sock",
		StateDir:       "/csi/state",
		DefaultMounter: MounterRclone,
		RcloneBinary:   "rclone",
		S3fsBinary:     "s3fs",
		Systemd:        "auto",
		MountTimeout:   30 * time.Second,
		UnstageTimeout: 10 * time.Minute,
	}
}

// Driver is the CSI driver.
type Driver struct {
	cfg Config
	// mounter and launcher do the node's mounts; tests replace them.
	mounter     mount.Interface
	lazyUnmount func(string) error
	launcher    Launcher
}

// New returns a driver for cfg.
func New(cfg Config) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, mounter: mount.NewWithoutSystemd(""), lazyUnmount: detach}
	if cfg.Mode != ModeController {
		l, err := NewLauncher(cfg.Systemd, cfg.DaemonCgroupRoot, cfg.DaemonMemoryMax)
		if err != nil {
			return nil, err
		}
		d.launcher = l
		// Daemons run the executables found now, never ones that a
		// service manager's PATH would find later.
		for _, bin := range []*string{&d.cfg.RcloneBinary, &d.cfg.S3fsBinary} {
			if p, err := exec.LookPath(*bin); err == nil {
				if abs, err := filepath.Abs(p); err == nil {
					*bin = abs
				}
			}
		}
	}
	return d, nil
}

// Run serves the driver's CSI services on its endpoint, and the kubelet
// plugin-registration API when PluginRegistrationDir is set, until ctx
// ends; then it removes the sockets.
func (d *Driver) Run(ctx context.Context) error {
	path, err := SocketPath(d.cfg.Endpoint)
	if err != nil {
		return err
	}
	l, err := listenUnix(path, 0o660)
	if err != nil {
		return err
	}
	defer os.Remove(path)

	reg := prometheus.NewRegistry()
	ops, err := newOperationsSeconds(d.cfg.DriverName, reg)
	if err != nil {
		l.Close()
		return err
	}
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(ops.intercept, logGRPC))
	csipb.RegisterIdentityServer(srv, &identityServer{cfg: d.cfg})
	if d.cfg.Mode != ModeNode {
		csipb.RegisterControllerServer(srv, &controllerServer{cfg: d.cfg, locks: newKeyedMutex()})
	}
	var ns *nodeServer
	if d.cfg.Mode != ModeController {
		pending, err := newPendingUploads(reg)
		if err != nil {
			l.Close()
			return err
		}
		ns = &nodeServer{
			cfg: d.cfg, mounter: d.mounter, lazyUnmount: d.lazyUnmount, launcher: d.launcher,
			state: stateStore{root: d.cfg.StateDir}, locks: newKeyedMutex(), pending: pending,
		}
		if err := os.MkdirAll(d.cfg.StateDir, 0o700); err != nil {
			l.Close()
			return fmt.Errorf("creating state dir: %w", err)
		}
		csipb.RegisterNodeServer(srv, ns)
	}
	var metricsSrv *http.Server
	if d.cfg.MetricsAddress != "" {
		ml, err := net.Listen("tcp", d.cfg.MetricsAddress)
		if err != nil {
			l.Close()
			return fmt.Errorf("listening for metrics on %s: %w", d.cfg.MetricsAddress, err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = metricsSrv.Serve(ml) }()
		defer metricsSrv.Close()
	}

	// The registration socket appears only once the CSI socket listens,
	// since the kubelet calls the CSI endpoint as soon as it has GetInfo.
	var rs *registrar
	var regErrc chan error
	if d.cfg.PluginRegistrationDir != "" && d.cfg.Mode != ModeController {
		if rs, err = listenRegistration(d.cfg); err != nil {
			l.Close()
			return err
		}
		defer rs.stop()
		regErrc = make(chan error, 1)
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	if ns != nil {
		// Healing runs once the socket serves, under each volume's lock,
		// so that dead volumes delay no call for the others.
		adoptCtx, stopAdopt := context.WithCancel(ctx)
		adopted := make(chan struct{})
		go func() {
			defer close(adopted)
			ns.adopt(adoptCtx)
		}()
		defer func() {
			stopAdopt()
			<-adopted
		}()
	}
	log := klog.FromContext(ctx)
	log.Info("Serving CSI", "driver", d.cfg.DriverName, "mode", d.cfg.Mode, "endpoint", d.cfg.Endpoint)
	if rs != nil {
		go func() { regErrc <- rs.serve() }()
		log.Info("Serving kubelet plugin registration", "socket", rs.path, "kubeletEndpoint", d.cfg.RegistrationEndpoint())
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serving CSI on %s: %w", path, err)
	case err := <-regErrc:
		srv.Stop()
		return err
	case <-ctx.Done():
		if rs != nil {
			rs.stop()
		}
		srv.GracefulStop()
		return nil
	}
}

// listenUnix listens on a unix socket at path with mode perm, creating its
// directory and replacing a stale socket left by an earlier run.
func listenUnix(path string, perm os.FileMode) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("creating socket directory: %w", err)
	}
	return unixsock.ListenMode(path, perm)
}
