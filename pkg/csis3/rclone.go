package csis3

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// rcloneMounter mounts with `rclone mount2` (rclone's FUSE front end on
// go-fuse) and its VFS cache. mount2 serves the same VFS, options and cache
// as `rclone mount`, with about a third less CPU per byte read, which on
// nodes where the reader, the daemon and the network stack share the cores
// is read throughput.
type rcloneMounter struct {
	bin string
}

var _ Mounter = rcloneMounter{}

// rcloneAllowed are the rclone flags a volume may add (as --flag or
// --flag=value). Flags that move files outside the state dir (--config,
// --cache-dir, --log-file), open ports (--rc) or fork (--daemon) are not.
var rcloneAllowed = map[string]bool{
	"--vfs-cache-mode": true, "--vfs-cache-max-size": true, "--vfs-cache-min-free-space": true, "--vfs-cache-max-age": true,
	"--vfs-cache-poll-interval": true, "--vfs-read-chunk-size": true, "--vfs-read-chunk-size-limit": true,
	"--vfs-read-chunk-streams": true, "--vfs-read-wait": true, "--vfs-read-ahead": true, "--use-mmap": true, "--vfs-write-back": true, "--vfs-fast-fingerprint": true,
	"--vfs-case-insensitive": true, "--dir-cache-time": true, "--attr-timeout": true,
	"--buffer-size": true, "--transfers": true, "--checkers": true, "--async-read": true,
	"--max-read-ahead": true, "--write-back-cache": true, "--no-modtime": true, "--no-checksum": true,
	"--read-only": true, "--allow-other": true, "--uid": true, "--gid": true, "--umask": true,
	"--dir-perms": true, "--file-perms": true, "--low-level-retries": true, "--retries": true,
	"--contimeout": true, "--timeout": true, "--s3-chunk-size": true, "--s3-upload-concurrency": true,
	"--s3-upload-cutoff": true, "--s3-disable-checksum": true, "--s3-no-head": true,
	"--s3-list-version": true, "--s3-storage-class": true,
}

// Name returns "rclone".
func (rcloneMounter) Name() string { return MounterRclone }

// CheckOptions allows the flags in rcloneAllowed.
func (rcloneMounter) CheckOptions(opts []string) error {
	for _, o := range opts {
		name, _, _ := strings.Cut(o, "=")
		if err := checkAllowed(MounterRclone, o, name, rcloneAllowed); err != nil {
			return err
		}
	}
	return nil
}

// rcloneRemote is the remote rclone mounts. Its connection-string
// parameters take precedence over rclone.conf, so whatever that file says,
// the remote is an S3 remote that never reads credentials from rclone's
// environment or the node's instance metadata.
const rcloneRemote = "s3,type=s3,env_auth=false:"

// Default bounds of rclone's VFS cache of each volume; a volume's options
// may set others. Both are soft: files open or not uploaded yet stay.
const (
	// DefaultVFSCacheMaxSize is --vfs-cache-max-size.
	DefaultVFSCacheMaxSize = "10G"
	// DefaultVFSCacheMinFreeSpace is --vfs-cache-min-free-space: the cache
	// is trimmed when the file system it lives on has less free space.
	DefaultVFSCacheMinFreeSpace = "10G"
)

// rcloneConfig renders the [s3] section of rclone.conf. Credentials have
// no control characters (s3volume.CredentialsFromSecrets refuses them), so
// each value stays on its line; iniValue keeps rclone's parser from
// unquoting.
func rcloneConfig(creds s3volume.Credentials) string {
	var conf strings.Builder
	conf.WriteString("[s3]\ntype = s3\nprovider = Other\nenv_auth = false\n")
	for _, kv := range [][2]string{
		{"access_key_id", creds.AccessKeyID},
		{"secret_access_key", creds.SecretAccessKey},
		{"endpoint", creds.Endpoint.String()},
		{"region", creds.Region},
	} {
		fmt.Fprintf(&conf, "%s = %s\n", kv[0], iniValue(kv[1]))
	}
	fmt.Fprintf(&conf, "force_path_style = %t\nno_check_bucket = true\n", !creds.VirtualHost)
	return conf.String()
}

// iniValue quotes v for rclone's config parser, which takes a value that
// starts with a backquote or three double quotes as quoted and strips the
// quotes: such values, and values with blanks at their ends, are wrapped
// in backquotes (the parser takes the text up to the last backquote).
func iniValue(v string) string {
	if strings.HasPrefix(v, "`") || strings.HasPrefix(v, `"`) || strings.TrimSpace(v) != v {
		return "`" + v + "`"
	}
	return v
}

// rcloneDefaults are the performance flags every rclone volume starts with;
// a volume's options may override each (later flags win). The reasons, as
// measured on the setup of test/bench/csi (docs/csi-s3.md, "rclone's
// defaults"):
//
//   - --vfs-write-back 1s: rclone uploads a closed file after this delay
//     (5s by default), and a durable write waits for it in full; 1s still
//     uploads a file closed and reopened at once only once.
//   - --s3-list-version 2: for S3 servers of no known provider rclone lists
//     with ListObjects v1, whose pages versitygw served 0.08 s slower per
//     10000 keys and which carry each object's owner to decode; with v2,
//     `ls` of 10000 objects on a fresh mount took 0.52-0.98 s against
//     0.60-1.18 s, faster in 11 of 12 interleaved pairs at load 4.5-7.2
//     (by 0.14 s in the median). The driver's own listings (minio-go)
//     already use v2, so no server that works with the driver lacks it;
//     --s3-list-version=1 in a volume's options goes back.
//
// Left at rclone's defaults, as they measured no better otherwise: the
// chunked reader (--vfs-read-chunk-streams 0 with 128 MiB chunks,
// --buffer-size 16M; parallel chunk streams read no faster and doubled the
// daemon's memory) and the uploads (--s3-upload-concurrency 4,
// --s3-chunk-size 5M; 8 streams or 16 MiB or 64 MiB parts were within the
// noise). Volumes behind a high-latency link may set them in their
// options.
var rcloneDefaults = []string{"--vfs-write-back", "1s", "--s3-list-version", "2"}

// Command writes rclone.conf (and ca.pem) into dir and returns
// `rclone mount2 s3:bucket/prefix target ...`. Timeouts are short so that
// I/O on an unreachable server fails instead of hanging; the VFS cache is
// bounded by DefaultVFSCacheMaxSize and DefaultVFSCacheMinFreeSpace unless
// the volume's options say otherwise (later flags win).
func (m rcloneMounter) Command(vol Volume, creds s3volume.Credentials, target, dir string) (Command, error) {
	if s3volume.HasControl(creds.AccessKeyID) || s3volume.HasControl(creds.SecretAccessKey) || s3volume.HasControl(creds.Region) {
		return Command{}, status.Error(codes.InvalidArgument, "S3 credentials contain a control character")
	}
	confPath, err := writeSecretFile(dir, "rclone.conf", []byte(rcloneConfig(creds)))
	if err != nil {
		return Command{}, err
	}
	args := []string{
		"mount2", rcloneRemote + remotePath(vol), target,
		"--config", confPath,
		"--cache-dir", filepath.Join(dir, "cache"),
		"--vfs-cache-mode", vol.VFSCacheMode,
		"--vfs-cache-max-size", DefaultVFSCacheMaxSize,
		"--vfs-cache-min-free-space", DefaultVFSCacheMinFreeSpace,
		"--dir-cache-time", "30s",
		"--contimeout", "5s", "--timeout", "30s",
		"--low-level-retries", "3", "--retries", "1",
	}
	args = append(args, rcloneDefaults...)
	if creds.Insecure {
		args = append(args, "--no-check-certificate")
	}
	if len(creds.CABundle) > 0 {
		caPath, err := writeSecretFile(dir, "ca.pem", creds.CABundle)
		if err != nil {
			return Command{}, err
		}
		args = append(args, "--ca-cert", caPath)
	}
	if vol.AllowOther {
		args = append(args, "--allow-other")
	}
	if vol.ReadOnly {
		args = append(args, "--read-only")
	}
	if vol.UID >= 0 {
		args = append(args, "--uid", strconv.Itoa(vol.UID))
	}
	if vol.GID >= 0 {
		args = append(args, "--gid", strconv.Itoa(vol.GID))
	}
	if vol.Mode != 0 {
		args = append(args, "--file-perms", fmt.Sprintf("%04o", vol.Mode), "--dir-perms", fmt.Sprintf("%04o", dirMode(vol.Mode)))
	}
	args = append(args, vol.Options...)
	return Command{Path: m.bin, Args: args}, nil
}

// Pending counts the files rclone's VFS cache under dir holds written but
// not uploaded yet. rclone exits on unmount without uploading them, so
// unstaging waits until this is zero.
func (rcloneMounter) Pending(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(filepath.Join(dir, "cache", "vfsMeta"), func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // uploaded and removed meanwhile
		}
		if err != nil {
			return err
		}
		// Fail closed. rclone rewrites a file's metadata in place, so a
		// read may catch it half written: that file counts as pending and
		// is read again at the next poll. Metadata without rclone's Dirty
		// field is a format this code does not know: an error.
		var meta struct{ Dirty *bool }
		if err := json.Unmarshal(b, &meta); err != nil {
			n++
			return nil //nolint:nilerr // a torn write counts as pending
		}
		if meta.Dirty == nil {
			return fmt.Errorf("rclone cache metadata %s has no Dirty field", p)
		}
		if *meta.Dirty {
			n++
		}
		return nil
	})
	return n, err
}
