// Package shim exposes existing storage as PVCs: the StorageShim controller
// turns each StorageShim into a static PV for the csi-s3 driver (package
// csis3) or ceph-csi, and a PVC bound to it.
package shim
