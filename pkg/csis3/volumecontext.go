package csis3

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// attrKeys are the context keys the driver knows; CreateVolume copies only
// these from the StorageClass parameters into the volume context.
var attrKeys = []string{s3volume.AttrMounter, s3volume.AttrOptions, s3volume.AttrReadOnly, s3volume.AttrVFSCacheMode, s3volume.AttrUID, s3volume.AttrGID, s3volume.AttrMode, s3volume.AttrAllowOther}

// markerObject is the object CreateVolume writes into each volume it
// provisions; DeleteVolume deletes only volumes that carry it, so static
// volumes (existing buckets and prefixes) are never deleted.
const markerObject = ".csi-s3-volume.json"

// Volume is an S3 location and how to mount it.
type Volume struct {
	// ID is the CSI volume ID (volumeHandle).
	ID string
	// Bucket and Prefix locate the volume; Prefix is empty for a whole bucket.
	Bucket, Prefix string
	// Mounter names the Mounter.
	Mounter string
	// Options are extra mounter options, already checked by the mounter.
	Options []string
	// ReadOnly mounts the volume read-only for everyone.
	ReadOnly bool
	// VFSCacheMode is rclone's cache mode.
	VFSCacheMode string
	// UID and GID own the files; -1 leaves the mounter's default.
	UID, GID int
	// Mode is the files' permission bits; 0 leaves the mounter's default.
	Mode uint32
	// AllowOther lets users other than root use the mount.
	AllowOther bool
}

// ParseVolumeID splits a volume ID of the form bucket[/prefix].
func ParseVolumeID(id string) (bucket, prefix string, err error) {
	bucket, prefix, _ = strings.Cut(id, "/")
	if err := validateBucket(bucket); err != nil {
		return "", "", status.Errorf(codes.NotFound, "volume ID %q: %v", id, err)
	}
	if prefix, err = cleanPrefix(prefix); err != nil {
		return "", "", status.Errorf(codes.InvalidArgument, "volume ID %q: %v", id, err)
	}
	return bucket, prefix, nil
}

// VolumeID is the ID CreateVolume gives a volume at bucket/prefix.
func VolumeID(bucket, prefix string) string {
	if prefix == "" {
		return bucket
	}
	return bucket + "/" + prefix
}

// VolumeFromContext builds the volume for a node request from its ID and
// context. The attributes bucket and prefix, when given, win over the ID, so
// static volumes may use any unique volumeHandle. Errors are InvalidArgument.
func VolumeFromContext(id string, attrs map[string]string, defaultMounter string) (Volume, error) {
	v := Volume{ID: id, UID: -1, GID: -1, AllowOther: true, VFSCacheMode: "writes", Mounter: defaultMounter}
	var err error
	if b, ok := attrs[s3volume.AttrBucket]; ok {
		v.Bucket = b
		if err := validateBucket(b); err != nil {
			return v, status.Errorf(codes.InvalidArgument, "volume attribute %s: %v", s3volume.AttrBucket, err)
		}
		if v.Prefix, err = cleanPrefix(attrs[s3volume.AttrPrefix]); err != nil {
			return v, status.Errorf(codes.InvalidArgument, "volume attribute %s: %v", s3volume.AttrPrefix, err)
		}
	} else {
		if _, ok := attrs[s3volume.AttrPrefix]; ok {
			return v, status.Errorf(codes.InvalidArgument, "volume attribute %s needs %s", s3volume.AttrPrefix, s3volume.AttrBucket)
		}
		if v.Bucket, v.Prefix, err = ParseVolumeID(id); err != nil {
			return v, status.Error(codes.InvalidArgument, status.Convert(err).Message())
		}
	}
	if m := attrs[s3volume.AttrMounter]; m != "" {
		v.Mounter = m
	}
	if v.ReadOnly, err = boolAttr(attrs, s3volume.AttrReadOnly, false); err != nil {
		return v, err
	}
	if v.AllowOther, err = boolAttr(attrs, s3volume.AttrAllowOther, true); err != nil {
		return v, err
	}
	if v.ReadOnly {
		// Nothing is written, so no write-back cache: reads stream
		// from S3 and the volume keeps no cache directory.
		v.VFSCacheMode = "off"
	}
	if m := attrs[s3volume.AttrVFSCacheMode]; m != "" {
		switch m {
		case "off", "minimal", "writes", "full":
			v.VFSCacheMode = m
		default:
			return v, status.Errorf(codes.InvalidArgument, "volume attribute %s: %q is not off, minimal, writes or full", s3volume.AttrVFSCacheMode, m)
		}
	}
	for _, id := range []struct {
		key string
		dst *int
	}{{s3volume.AttrUID, &v.UID}, {s3volume.AttrGID, &v.GID}} {
		if s := attrs[id.key]; s != "" {
			n, err := strconv.ParseUint(s, 10, 31)
			if err != nil {
				return v, status.Errorf(codes.InvalidArgument, "volume attribute %s: %q is not a user or group ID", id.key, s)
			}
			*id.dst = int(n)
		}
	}
	if s := attrs[s3volume.AttrMode]; s != "" {
		n, err := strconv.ParseUint(s, 8, 32)
		if err != nil || n > 0o777 {
			return v, status.Errorf(codes.InvalidArgument, "volume attribute %s: %q is not octal permission bits", s3volume.AttrMode, s)
		}
		v.Mode = uint32(n)
	}
	if v.Options, err = splitOptions(attrs[s3volume.AttrOptions]); err != nil {
		return v, status.Errorf(codes.InvalidArgument, "volume attribute %s: %v", s3volume.AttrOptions, err)
	}
	return v, nil
}

// boolAttr reads a boolean attribute, def when absent.
func boolAttr(attrs map[string]string, key string, def bool) (bool, error) {
	s, ok := attrs[key]
	if !ok || s == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return def, status.Errorf(codes.InvalidArgument, "volume attribute %s: %q is not a boolean", key, s)
	}
	return b, nil
}

// splitOptions splits space-separated options; single or double quotes
// group words.
func splitOptions(s string) ([]string, error) {
	var opts []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				opts = append(opts, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote")
	}
	if inWord {
		opts = append(opts, cur.String())
	}
	return opts, nil
}

// validateBucket applies S3's bucket naming rules.
func validateBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q must be 3 to 63 characters", b)
	}
	for i, r := range b {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || (r == '-' || r == '.') && i > 0 && i < len(b)-1
		if !ok {
			return fmt.Errorf("bucket name %q: only lower-case letters, digits, and inner '-' and '.' are allowed", b)
		}
	}
	if strings.Contains(b, "..") {
		return fmt.Errorf("bucket name %q must not contain \"..\"", b)
	}
	return nil
}

// cleanPrefix checks that p is a relative path that stays inside the
// bucket and returns it without leading or trailing slashes.
func cleanPrefix(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	if strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("prefix %q must be relative", p)
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("prefix %q contains a NUL byte", p)
	}
	for _, part := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
		switch part {
		case "..":
			return "", fmt.Errorf("prefix %q must not contain \"..\"", p)
		case "", ".":
			return "", fmt.Errorf("prefix %q has an empty or \".\" element", p)
		}
	}
	return path.Clean(p), nil
}

// sanitizeName maps a CSI volume name to a valid bucket name (and prefix),
// deterministically: names that already qualify are kept; others are
// lower-cased, stripped of invalid characters and suffixed with a hash of
// the original name so that distinct names stay distinct.
func sanitizeName(name string) string {
	if validateBucket(name) == nil {
		return name
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	base := strings.Trim(b.String(), "-")
	if len(base) > 46 {
		base = strings.TrimRight(base[:46], "-")
	}
	sum := sha256.Sum256([]byte(name))
	if base == "" {
		base = "vol"
	}
	return base + "-" + hex.EncodeToString(sum[:])[:16]
}

// sprintf is fmt.Sprintf; a name of its own keeps call sites short.
func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
