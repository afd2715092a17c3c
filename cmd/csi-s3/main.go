// Command csi-s3 is a CSI driver that mounts S3 buckets and prefixes as
// ReadWriteMany volumes (StorageShim PVCs, the csi-s3 StorageClass).
package main

import (
	"context"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/shim/csi"
	"github.com/accelstack/accelstack/pkg/version"
)

func main() {
	fs := cli.NewFlagSet("csi-s3", "CSI driver for S3 buckets as volumes")
	cfg := csi.Config{Version: version.Get().GitVersion}
	fs.StringVar(&cfg.Mode, "mode", csi.ModeAll, "Services to run: controller, node or all.")
	fs.StringVar(&cfg.Endpoint, "endpoint", "unix:///csi/csi.sock", "CSI endpoint, unix:///path.")
	fs.StringVar(&cfg.NodeID, "node-id", "", "This node's ID; required unless --mode=controller.")
	fs.StringVar(&cfg.DriverName, "driver-name", csi.DefaultDriverName, "CSI driver name.")
	fs.Env("endpoint", "CSI_ENDPOINT")
	fs.Env("node-id", "NODE_ID")
	fs.Check(func() error { return cfg.Validate() })

	cli.Main(fs, func(ctx context.Context) error {
		d, err := csi.New(cfg)
		if err != nil {
			return err
		}
		return d.Run(ctx)
	})
}
