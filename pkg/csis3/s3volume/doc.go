// Package s3volume is what an S3 volume carries to the csi-s3 driver: the
// driver's name, the keys of a volume's attributes (StorageClass parameters
// and the volumeAttributes of static PVs) and of its Secret, and the
// parsing and checks of the credentials that Secret holds.
//
// It is the contract between the driver (package csis3) and whoever writes
// volumes for it, such as the StorageShim controller, and it is separate
// from the driver so that those writers link none of the driver's gRPC,
// S3 or mount code. It imports only the standard library.
package s3volume
