package ociimage

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// maxSymlinks bounds symlink resolution, as Linux does (ELOOP after 40).
const maxSymlinks = 40

// AddExecutable copies the ELF executable at hostPath to imagePath and adds
// its shared-library closure, interpreter included, at the same absolute
// paths as on the host. Every symlink met on the way to a library (such as
// /lib -> usr/lib on a merged-/usr host, or libfoo.so.1 -> libfoo.so.1.2) is
// added as a symlink next to its target, so the loader finds each library
// under the path ldd reported. A static executable needs nothing else.
//
// The closure is resolved now with ldd; file contents are read at Write time.
func (img *Image) AddExecutable(hostPath, imagePath string) error {
	libs, err := sharedLibraries(hostPath)
	if err != nil {
		return err
	}
	img.AddFile(hostPath, imagePath)
	for _, lib := range libs {
		if err := img.addHostPath(lib); err != nil {
			return fmt.Errorf("adding library of %s: %w", hostPath, err)
		}
	}
	return nil
}

// sharedLibraries returns the absolute paths of the shared libraries and the
// interpreter that the executable at p loads, or nothing for a static one.
func sharedLibraries(p string) ([]string, error) {
	f, err := elf.Open(p)
	if err != nil {
		return nil, fmt.Errorf("reading executable %s: %w", p, err)
	}
	// Only a dynamic executable has an interpreter; ldd fails on others.
	dynamic := slices.ContainsFunc(f.Progs, func(prog *elf.Prog) bool { return prog.Type == elf.PT_INTERP })
	_ = f.Close() // read-only: nothing to lose
	if !dynamic {
		return nil, nil
	}
	out, runErr := exec.Command("ldd", p).CombinedOutput()
	libs, err := parseLdd(string(out))
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w", p, err)
	}
	if runErr != nil && len(libs) == 0 {
		return nil, fmt.Errorf("ldd %s: %w: %s", p, runErr, strings.TrimSpace(string(out)))
	}
	return libs, nil
}

// parseLdd extracts the library and interpreter paths from ldd's output,
// sorted and without duplicates. Lines without a path, such as the vDSO's,
// are skipped; a static binary yields no paths; a missing library is an
// error.
func parseLdd(out string) ([]string, error) {
	var libs []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "",
			strings.Contains(line, "not a dynamic executable"),
			strings.Contains(line, "statically linked"):
			continue
		}
		// "libx.so.1 => /path/libx.so.1 (0x...)", "/lib64/ld-linux.so.2 (0x...)",
		// "linux-vdso.so.1 (0x...)" or "libx.so.1 => not found".
		p := line
		if name, target, ok := strings.Cut(line, "=>"); ok {
			p = strings.TrimSpace(target)
			if strings.HasPrefix(p, "not found") {
				return nil, fmt.Errorf("library %s not found", strings.TrimSpace(name))
			}
		}
		if i := strings.Index(p, " ("); i >= 0 {
			p = p[:i]
		} else if strings.HasPrefix(p, "(") {
			p = ""
		}
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			continue
		}
		libs = append(libs, filepath.Clean(p))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.Sort(libs)
	return slices.Compact(libs), nil
}

// addHostPath adds the host file at the absolute path p at the same path in
// the image. It resolves p one component at a time: each symlink met is
// added as a symlink at its resolved location, and the file itself at its
// fully resolved path, so p resolves the same way in the image as on the
// host.
func (img *Image) addHostPath(p string) error {
	orig := p
	for range maxSymlinks {
		resolved, rest, target, err := walkToSymlink(p)
		if err != nil {
			return err
		}
		if rest == "" && target == "" {
			fi, err := os.Stat(resolved)
			if err != nil {
				return err
			}
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("%s: %s is not a regular file", orig, resolved)
			}
			img.AddFile(resolved, resolved)
			return nil
		}
		img.AddSymlink(resolved, target)
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(resolved), target)
		}
		p = filepath.Join(target, rest)
	}
	return fmt.Errorf("%s: %w", orig, syscall.ELOOP)
}

// walkToSymlink walks the absolute path p from the root until it meets a
// symlink. It returns the symlink's path (whose parent holds no symlink),
// the rest of p below it and the link's target; or, when p holds no
// symlink, p cleaned and empty rest and target.
func walkToSymlink(p string) (resolved, rest, target string, err error) {
	p = filepath.Clean(p)
	if !filepath.IsAbs(p) {
		return "", "", "", fmt.Errorf("%s: not an absolute path", p)
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := "/"
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return "", "", "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		target, err := os.Readlink(cur)
		if err != nil {
			return "", "", "", err
		}
		return cur, filepath.Join(parts[i+1:]...), target, nil
	}
	return cur, "", "", nil
}
