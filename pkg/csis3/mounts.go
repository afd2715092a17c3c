package csis3

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/mount-utils"
)

// unmountTimeout bounds an umount; a busy or hung one is then detached.
const unmountTimeout = 30 * time.Second

// detach is lazyUnmount on the real system (umount -l).
func detach(path string) error {
	err := unix.Unmount(path, unix.MNT_DETACH)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
		return nil // not mounted (any more)
	}
	return err
}

// mountState says whether path is a mount point and whether that mount is
// dead (ENOTCONN and friends). A missing path is not mounted.
func (s *nodeServer) mountState(path string) (mounted, corrupted bool, err error) {
	// IsMountPoint may answer from mountinfo alone and stat from cached
	// attributes; statfs always asks the FUSE daemon, so it sees a dead one.
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil && isCorrupted(&os.PathError{Op: "statfs", Path: path, Err: err}) {
		return true, true, nil
	}
	mnt, err := s.mounter.IsMountPoint(path)
	switch {
	case err == nil:
		return mnt, false, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, false, nil
	case isCorrupted(err):
		return true, true, nil
	}
	return false, false, err
}

// isCorrupted extends mount.IsCorruptedMnt with ECONNABORTED, which a FUSE
// mount returns once its daemon was killed and the connection aborted.
func isCorrupted(err error) bool {
	return mount.IsCorruptedMnt(err) || errors.Is(err, unix.ECONNABORTED)
}

// unmount removes any mount at path: a normal unmount, or a lazy one when
// the mount is dead or busy.
func (s *nodeServer) unmount(path string) error {
	mounted, corrupted, err := s.mountState(path)
	if err != nil {
		return status.Errorf(codes.Internal, "checking %s: %v", path, err)
	}
	if !mounted {
		return nil
	}
	if !corrupted {
		if err := s.umount(path); err == nil {
			return nil
		}
	}
	if err := s.lazyUnmount(path); err != nil {
		return status.Errorf(codes.Internal, "unmounting %s: %v", path, err)
	}
	return nil
}

// bind bind-mounts staging at target, read-only when readOnly, creating
// target.
func (s *nodeServer) bind(staging, target string, readOnly bool) error {
	if err := os.MkdirAll(target, 0o750); err != nil {
		return status.Errorf(codes.Internal, "creating target path: %v", err)
	}
	opts := []string{"bind"}
	if readOnly {
		opts = append(opts, "ro")
	}
	if err := s.mounter.Mount(staging, target, "", opts); err != nil {
		return status.Errorf(codes.Internal, "bind-mounting %s: %v", target, err)
	}
	return nil
}

// isBindOf says whether the mount at target is a bind mount of the mount
// at staging, read-only exactly when readOnly: in mountinfo both have the
// same device and root, and target's per-mount options say ro or rw.
func (s *nodeServer) isBindOf(target, staging string, readOnly bool) (bool, error) {
	read := s.mountInfo
	if read == nil {
		read = func() ([]mount.MountInfo, error) { return mount.ParseMountInfo("/proc/self/mountinfo") }
	}
	infos, err := read()
	if err != nil {
		return false, err
	}
	// The last entry of a path is the mount on top, the one that is seen.
	var st, tg *mount.MountInfo
	for i := range infos {
		switch infos[i].MountPoint {
		case staging:
			st = &infos[i]
		case target:
			tg = &infos[i]
		}
	}
	if st == nil || tg == nil || st.Major != tg.Major || st.Minor != tg.Minor || st.Root != tg.Root {
		return false, nil
	}
	return slices.Contains(tg.MountOptions, "ro") == readOnly, nil
}

// umount unmounts path, with a timeout where the mounter runs umount.
func (s *nodeServer) umount(path string) error {
	if f, ok := s.mounter.(mount.MounterForceUnmounter); ok {
		return f.UnmountWithForce(path, unmountTimeout)
	}
	return s.mounter.Unmount(path)
}
