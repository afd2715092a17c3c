package csis3

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// s3fsMounter mounts with s3fs-fuse.
type s3fsMounter struct {
	bin string
}

var _ Mounter = s3fsMounter{}

// s3fsAllowed are the -o options a volume may add (name or name=value,
// with or without a leading "-o "). Options that name local files
// (passwd_file, use_cache, logfile) or change the endpoint are not allowed.
var s3fsAllowed = map[string]bool{
	"uid": true, "gid": true, "umask": true, "mp_umask": true, "allow_other": true, "ro": true,
	"multipart_size": true, "parallel_count": true, "max_dirty_data": true, "multireq_max": true,
	"stat_cache_expire": true, "stat_cache_interval_expire": true, "enable_noobj_cache": true,
	"max_stat_cache_size": true, "readwrite_timeout": true, "connect_timeout": true, "retries": true,
	"list_object_max_keys": true, "singlepart_copy_limit": true, "nomultipart": true,
	"notsup_compat_dir": true, "compat_dir": true, "enable_content_md5": true, "storage_class": true,
	"use_xattr": true, "complement_stat": true, "nonempty": true, "noatime": true, "sigv2": true, "sigv4": true,
}

// Name returns "s3fs".
func (s3fsMounter) Name() string { return MounterS3fs }

// CheckOptions allows the options in s3fsAllowed.
func (s3fsMounter) CheckOptions(opts []string) error {
	for _, o := range s3fsOptions(opts) {
		name, _, _ := strings.Cut(o, "=")
		if err := checkAllowed(MounterS3fs, o, name, s3fsAllowed); err != nil {
			return err
		}
	}
	return nil
}

// s3fsOptions flattens "-o a,b", "-o", "c" and "d=1" into single options.
func s3fsOptions(opts []string) []string {
	var out []string
	for _, o := range opts {
		o = strings.TrimPrefix(o, "-o")
		for _, part := range strings.Split(o, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// Command writes the passwd file into dir and returns `s3fs bucket:/prefix
// target -f -o ...`.
func (m s3fsMounter) Command(vol Volume, creds s3volume.Credentials, target, dir string) (Command, error) {
	if len(creds.CABundle) > 0 {
		return Command{}, status.Errorf(codes.InvalidArgument, "secret key %s is not supported by mounter s3fs; use rclone or a system-trusted CA", s3volume.SecretCABundle)
	}
	if err := checkS3fsCredentials(creds); err != nil {
		return Command{}, err
	}
	passwd, err := writeSecretFile(dir, "passwd-s3fs", []byte(creds.AccessKeyID+":"+creds.SecretAccessKey+"\n"))
	if err != nil {
		return Command{}, err
	}
	source := vol.Bucket
	if vol.Prefix != "" {
		source += ":/" + vol.Prefix
	}
	o := []string{
		"passwd_file=" + passwd,
		"url=" + creds.Endpoint.String(),
		"endpoint=" + creds.Region,
		"connect_timeout=5", "readwrite_timeout=30", "retries=2",
		"stat_cache_expire=30",
	}
	if !creds.VirtualHost {
		o = append(o, "use_path_request_style")
	}
	if creds.Insecure {
		o = append(o, "no_check_certificate", "ssl_verify_hostname=0")
	}
	if vol.AllowOther {
		o = append(o, "allow_other")
	}
	if vol.ReadOnly {
		o = append(o, "ro")
	}
	if vol.UID >= 0 {
		o = append(o, "uid="+strconv.Itoa(vol.UID))
	}
	if vol.GID >= 0 {
		o = append(o, "gid="+strconv.Itoa(vol.GID))
	}
	if vol.Mode != 0 {
		o = append(o, fmt.Sprintf("umask=%04o", 0o777&^dirMode(vol.Mode)))
	}
	o = append(o, s3fsOptions(vol.Options)...)
	args := []string{source, target, "-f"}
	for _, opt := range o {
		args = append(args, "-o", opt)
	}
	return Command{Path: m.bin, Args: args}, nil
}

// checkS3fsCredentials refuses credentials that s3fs would misread: its
// passwd file takes a line with blanks or a leading '#' or '[' as invalid
// or a comment, one with '=' as a key=value line, and one with two ':' as
// bucket:key:secret. The region and endpoint host go into -o options, where
// ',' would start another option; s3volume.CredentialsFromSecrets has
// refused that already, this keeps Command safe for any caller.
func checkS3fsCredentials(creds s3volume.Credentials) error {
	for _, kv := range [][2]string{{s3volume.SecretAccessKeyID, creds.AccessKeyID}, {s3volume.SecretSecretAccessKey, creds.SecretAccessKey}} {
		if s3volume.HasControl(kv[1]) || strings.ContainsAny(kv[1], " \t:=") || strings.HasPrefix(kv[1], "#") || strings.HasPrefix(kv[1], "[") {
			return status.Errorf(codes.InvalidArgument, "secret key %s: mounter s3fs cannot read keys with blanks, ':' or '=', or starting with '#' or '['; use mounter rclone", kv[0])
		}
	}
	if err := s3volume.CheckRegion(creds.Region); err != nil {
		return status.Errorf(codes.InvalidArgument, "secret key %s: %v", s3volume.SecretRegion, err)
	}
	if creds.Endpoint == nil {
		return status.Errorf(codes.InvalidArgument, "secret key %s: missing", s3volume.SecretEndpoint)
	}
	if _, err := s3volume.CheckHostPort(creds.Endpoint.Host); err != nil {
		return status.Errorf(codes.InvalidArgument, "secret key %s: %v", s3volume.SecretEndpoint, err)
	}
	return nil
}
