// Package csis3 is the csi-s3 CSI driver: it serves the CSI Identity,
// Controller and Node services over a unix socket for S3-backed volumes.
//
// The controller creates a bucket (or a prefix in a shared bucket) per
// volume. The node stages a volume by starting a FUSE daemon (rclone or
// s3fs, see Mounter) at the staging path, detached from the plugin so that
// the mount outlives a plugin restart, and publishes it into pods with bind
// mounts. What the node mounted is recorded in a state directory, so a
// restarted plugin re-adopts live mounts and heals dead ones.
//
// What a volume carries to the driver (its attribute and secret keys, and
// the checks on its credentials) is package s3volume.
package csis3
