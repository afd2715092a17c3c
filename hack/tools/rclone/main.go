// Command rclone is rclone, pinned in go.mod, built with only the parts
// accelstack runs: the s3 and local backends, the alias backend (which
// the tests use to show that csi-s3's pinned remote ignores a hostile
// rclone.conf), and the mount2 (csi-s3's mounter), config, copy, lsf and
// version commands. rclone's own main imports every backend and command;
// this one compiles in a fraction of the time and ships fewer dependencies
// in the csi-s3 image, with the same code on the paths it keeps (flags,
// VFS, the S3 client).
package main

import (
	"github.com/rclone/rclone/cmd"

	_ "github.com/rclone/rclone/backend/alias"
	_ "github.com/rclone/rclone/backend/local"
	_ "github.com/rclone/rclone/backend/s3"
	_ "github.com/rclone/rclone/cmd/config"
	_ "github.com/rclone/rclone/cmd/copy"
	_ "github.com/rclone/rclone/cmd/lsf"
	_ "github.com/rclone/rclone/cmd/mount2"
	_ "github.com/rclone/rclone/cmd/version"
)

func main() { cmd.Main() }
