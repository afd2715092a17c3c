package csis3

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// Names of the mounters, the values of the mounter attribute.
const (
	MounterRclone = "rclone"
	MounterS3fs   = "s3fs"
)

// Mounter builds the command line of a FUSE daemon that mounts a volume.
// The daemon runs in the foreground; the Launcher detaches it from the
// plugin.
type Mounter interface {
	// Name is the value of the mounter attribute that selects this mounter.
	Name() string
	// CheckOptions refuses options that are not on the mounter's
	// allowlist, with an InvalidArgument error naming the option.
	CheckOptions(opts []string) error
	// Command returns the command that mounts vol at target. It writes the
	// credentials into files under dir (created 0700, files 0600), never
	// into the command line or the environment, where other users or the
	// service manager could read them.
	Command(vol Volume, creds s3volume.Credentials, target, dir string) (Command, error)
}

// uploader is a Mounter whose daemon may hold written data that it has not
// uploaded yet and would drop on unmount.
type uploader interface {
	// Pending counts files not uploaded yet, from the state under dir.
	Pending(dir string) (int, error)
}

var _ uploader = rcloneMounter{}

// Command is a daemon's command line.
type Command struct {
	// Path is the executable.
	Path string `json:"path"`
	// Args are the arguments after the program name.
	Args []string `json:"args"`
}

// mounterFor returns the mounter that vol names, its options checked.
func mounterFor(cfg Config, vol Volume) (Mounter, error) {
	var m Mounter
	switch vol.Mounter {
	case MounterRclone:
		m = rcloneMounter{bin: cfg.RcloneBinary}
	case MounterS3fs:
		m = s3fsMounter{bin: cfg.S3fsBinary}
	default:
		return nil, status.Errorf(codes.InvalidArgument, "volume attribute %s: unknown mounter %q (want %s or %s)", s3volume.AttrMounter, vol.Mounter, MounterRclone, MounterS3fs)
	}
	if err := m.CheckOptions(vol.Options); err != nil {
		return nil, err
	}
	return m, nil
}

// checkAllowed refuses an option whose name (before '=') is not allowed.
func checkAllowed(mounter, opt, name string, allowed map[string]bool) error {
	if !allowed[name] {
		return status.Errorf(codes.InvalidArgument, "volume attribute %s: option %q is not allowed for mounter %s", s3volume.AttrOptions, opt, mounter)
	}
	return nil
}

// writeSecretFile writes a file only root can read.
func writeSecretFile(dir, name string, content []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, content, 0o600); err != nil {
		return "", fmt.Errorf("writing %s: %w", p, err)
	}
	// WriteFile keeps the mode of an existing file; make sure.
	if err := os.Chmod(p, 0o600); err != nil {
		return "", fmt.Errorf("restricting %s: %w", p, err)
	}
	return p, nil
}

// dirMode derives directory permissions from file permissions: search
// wherever read is granted.
func dirMode(mode uint32) uint32 { return mode | (mode&0o444)>>2 }

// remotePath is bucket[/prefix].
func remotePath(vol Volume) string {
	return strings.TrimSuffix(vol.Bucket+"/"+vol.Prefix, "/")
}
