package s3volume

// DefaultDriverName is the CSI driver name of csi-s3, the one StorageShim
// PVs refer to unless the controller is told otherwise.
const DefaultDriverName = "s3.csi.tensorstack.dev"

// Keys of a volume's context: StorageClass parameters that CreateVolume
// copies into the volume context, and the volumeAttributes of static PVs.
const (
	// AttrBucket is the bucket. As a StorageClass parameter it puts every
	// volume under its own prefix of this one bucket; without it each volume
	// gets its own bucket.
	AttrBucket = "bucket"
	// AttrPrefix is the key prefix (a relative path) inside the bucket.
	AttrPrefix = "prefix"
	// AttrMounter names the FUSE mounter: rclone or s3fs.
	AttrMounter = "mounter"
	// AttrOptions is extra mounter options, space separated, checked against
	// the mounter's allowlist.
	AttrOptions = "options"
	// AttrReadOnly ("true") mounts the volume read-only for every pod.
	AttrReadOnly = "readOnly"
	// AttrVFSCacheMode is rclone's --vfs-cache-mode: off, minimal, writes
	// or full. The default is writes, and off for volumes with readOnly.
	AttrVFSCacheMode = "vfsCacheMode"
	// AttrUID and AttrGID own every file of the mount.
	AttrUID = "uid"
	AttrGID = "gid"
	// AttrMode is the octal permission bits of files; directories get the
	// same bits plus search (x) wherever read is granted.
	AttrMode = "mode"
	// AttrAllowOther ("false") stops other users than the mounter's from
	// using the mount; the default lets pods running as any user in.
	AttrAllowOther = "allowOther"
)
