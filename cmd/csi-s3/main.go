// Command csi-s3 is a CSI driver that mounts S3 buckets and prefixes as
// ReadWriteMany volumes (StorageShim PVCs, the csi-s3 StorageClass).
package main

import (
	"context"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/csis3"
	"github.com/accelstack/accelstack/pkg/version"
)

func main() {
	fs := cli.NewFlagSet("csi-s3", "CSI driver for S3 buckets as volumes")
	cfg := csis3.DefaultConfig()
	cfg.Version = version.Get().GitVersion
	fs.StringVar(&cfg.Mode, "mode", cfg.Mode, "Services to run: controller, node or all.")
	fs.StringVar(&cfg.Endpoint, "endpoint", cfg.Endpoint, "CSI endpoint, unix:///path.")
	fs.StringVar(&cfg.NodeID, "node-id", "", "This node's ID; required unless --mode=controller.")
	fs.StringVar(&cfg.DriverName, "driver-name", cfg.DriverName, "CSI driver name.")
	fs.StringVar(&cfg.StateDir, "state-dir", cfg.StateDir, "Node state (mount records, credential files, caches); must survive restarts.")
	fs.StringVar(&cfg.DefaultMounter, "default-mounter", cfg.DefaultMounter, "Mounter of volumes that name none: rclone or s3fs.")
	fs.StringVar(&cfg.RcloneBinary, "rclone", cfg.RcloneBinary, "rclone executable.")
	fs.StringVar(&cfg.S3fsBinary, "s3fs", cfg.S3fsBinary, "s3fs executable.")
	fs.StringVar(&cfg.Systemd, "systemd", cfg.Systemd, "Run FUSE daemons as transient systemd units: auto, true or false.")
	fs.StringVar(&cfg.DaemonMemoryMax, "daemon-memory-max", "", "MemoryMax= of each FUSE daemon run as a systemd unit, e.g. 2G; no limit when empty.")
	fs.StringVar(&cfg.DaemonCgroupRoot, "daemon-cgroup-root", "", "Where the host's cgroup hierarchies are mounted, e.g. /host/sys/fs/cgroup: without systemd, FUSE daemons move to the cgroup "+csis3.DaemonCgroupName+" under each hierarchy's root, out of the plugin container's; off when empty.")
	fs.StringVar(&cfg.PluginRegistrationDir, "plugin-registration-dir", "", "The kubelet's plugin registry directory as mounted here, e.g. /registration: serve kubelet plugin registration on <dir>/<driver-name>-reg.sock; off when empty.")
	fs.StringVar(&cfg.KubeletRegistrationPath, "kubelet-registration-path", "", "The CSI socket's path on the host, reported to the kubelet (default /var/lib/kubelet/plugins/<driver-name>/csi.sock).")
	fs.DurationVar(&cfg.MountTimeout, "mount-timeout", cfg.MountTimeout, "How long to wait for a FUSE mount to appear.")
	fs.DurationVar(&cfg.UnstageTimeout, "unstage-timeout", cfg.UnstageTimeout, "How long unstaging waits for a FUSE daemon to finish uploads and exit before killing it.")
	fs.StringVar(&cfg.MetricsAddress, "metrics-address", "", "Serve csi_plugin_operations_seconds on this address's /metrics, e.g. :9808; off when empty.")
	fs.Env("endpoint", "CSI_ENDPOINT")
	fs.Env("node-id", "NODE_ID")
	fs.Check(func() error { return cfg.Validate() })

	cli.Main(fs, func(ctx context.Context) error {
		d, err := csis3.New(cfg)
		if err != nil {
			return err
		}
		return d.Run(ctx)
	})
}
