package csis3

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// DaemonCgroupName is the cgroup, directly under the root of every
// hierarchy, that the cgroup launcher moves FUSE daemons into.
const DaemonCgroupName = "accelstack-csi-s3"

// cgroupHierarchies returns the cgroup hierarchies mounted at or under
// root: root itself when it is a cgroup (cgroup v2, or one v1 hierarchy),
// else each directory directly under root that is a cgroup (cgroup.procs),
// such as the v1 controller hierarchies, named ones like systemd, and a v2
// "unified" one. Symbolic links (cpuacct -> cpu,cpuacct) and a hierarchy
// mounted twice are listed once.
func cgroupHierarchies(root string) ([]string, error) {
	if isCgroup(root) {
		return []string{root}, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("listing cgroup hierarchies: %w", err)
	}
	type fileID struct{ dev, ino uint64 }
	seen := map[fileID]bool{}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		var st syscall.Stat_t
		if !isCgroup(dir) || syscall.Stat(dir, &st) != nil {
			continue
		}
		id := fileID{dev: uint64(st.Dev), ino: st.Ino} //nolint:unconvert // Dev is not uint64 on every platform
		if seen[id] {
			continue
		}
		seen[id] = true
		dirs = append(dirs, dir)
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no cgroup hierarchy found at or under %s", root)
	}
	sort.Strings(dirs)
	return dirs, nil
}

// isCgroup says whether dir is a cgroup directory.
func isCgroup(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "cgroup.procs"))
	return err == nil
}

// moveToCgroup moves process pid (all its threads) into the cgroup name
// directly under the root of every hierarchy that cgroupHierarchies finds
// under root, creating the cgroup where it is missing. It returns the
// hierarchies the process was moved in, and an error joining the failure
// of each hierarchy where the move was not possible; the caller decides
// whether a partial move is enough.
func moveToCgroup(root, name string, pid int) ([]string, error) {
	if name == "" || strings.ContainsRune(name, '/') || name == "." || name == ".." {
		return nil, fmt.Errorf("invalid cgroup name %q", name)
	}
	hierarchies, err := cgroupHierarchies(root)
	if err != nil {
		return nil, err
	}
	var moved []string
	var errs []error
	for _, h := range hierarchies {
		if err := moveInHierarchy(h, name, pid); err != nil {
			errs = append(errs, fmt.Errorf("hierarchy %s: %w", h, err))
			continue
		}
		moved = append(moved, h)
	}
	return moved, errors.Join(errs...)
}

// moveInHierarchy moves pid into the cgroup name under hierarchy root h.
func moveInHierarchy(h, name string, pid int) error {
	dir := filepath.Join(h, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("creating cgroup: %w", err)
	}
	if err := inheritCpuset(h, dir); err != nil {
		return err
	}
	// O_WRONLY without O_CREATE: a missing cgroup.procs means dir is no
	// cgroup, and writing a regular file would move nothing.
	f, err := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("opening cgroup.procs: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(strconv.Itoa(pid)); err != nil {
		return fmt.Errorf("writing pid %d to cgroup.procs: %w", pid, err)
	}
	return nil
}

// inheritCpuset copies cpuset.cpus and cpuset.mems from the parent into a
// cgroup v1 cpuset cgroup that has them empty, as a new one does unless
// the parent sets cgroup.clone_children; the kernel refuses (ENOSPC) to
// move a process into an empty cpuset. Cgroup v2 (cgroup.controllers)
// treats empty as inherited and is left alone.
func inheritCpuset(parent, dir string) error {
	if _, err := os.Stat(filepath.Join(parent, "cgroup.controllers")); err == nil {
		return nil
	}
	for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if errors.Is(err, os.ErrNotExist) {
			return nil // not a cpuset hierarchy
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", file, err)
		}
		if strings.TrimSpace(string(b)) != "" {
			continue
		}
		v, err := os.ReadFile(filepath.Join(parent, file))
		if err != nil {
			return fmt.Errorf("reading the parent's %s: %w", file, err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), v, 0o644); err != nil {
			return fmt.Errorf("setting %s: %w", file, err)
		}
	}
	return nil
}
