// Package shim exposes existing storage as PVCs: the StorageShim controller
// and, in package csi, the csi-s3 driver that mounts S3 for those PVCs.
package shim
