package executor

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ErrUnsafePath is returned for a path that is absolute, contains "..", or
// would lead outside the directory it belongs to.
var ErrUnsafePath = errors.New("unsafe path")

// CheckRelPath accepts a slash-separated relative path such as an object key
// below its prefix or a file name in a repository: not empty, not absolute,
// no "." or ".." element, no backslash or NUL.
func CheckRelPath(rel string) error {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.ContainsAny(rel, "\\\x00") {
		return fmt.Errorf("%w %q: must be a relative path", ErrUnsafePath, rel)
	}
	for _, elem := range strings.Split(rel, "/") {
		if elem == ".." || elem == "." {
			return fmt.Errorf("%w %q: must not contain %q", ErrUnsafePath, rel, elem)
		}
	}
	return nil
}

// JoinRel joins dir and the slash-separated relative path rel after
// CheckRelPath; empty elements (a//b) are dropped.
func JoinRel(dir, rel string) (string, error) {
	if err := CheckRelPath(rel); err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.FromSlash(path.Clean(rel))), nil
}

// ResolvePVCPath checks that p, the PVC directory of the environment
// contract, is an absolute path inside root without ".." elements, and that
// it does not leave root through a symbolic link. It returns the cleaned
// path.
func ResolvePVCPath(root, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("%w: the PVC path is empty", ErrUnsafePath)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%w %q: the PVC path must be absolute", ErrUnsafePath, p)
	}
	for _, elem := range strings.Split(filepath.ToSlash(p), "/") {
		if elem == ".." {
			return "", fmt.Errorf("%w %q: the PVC path must not contain \"..\"", ErrUnsafePath, p)
		}
	}
	clean := filepath.Clean(p)
	root = filepath.Clean(root)
	if !within(root, clean) {
		return "", fmt.Errorf("%w %q: the PVC path must lie in %s", ErrUnsafePath, p, root)
	}
	if err := checkNoEscape(root, clean); err != nil {
		return "", err
	}
	return clean, nil
}

// within reports whether target is base or lies below it (lexically).
func within(base, target string) bool {
	rel, err := filepath.Rel(base, target)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// checkNoEscape resolves the symbolic links of the longest existing prefix
// of target and checks it still lies in base (whose own links are resolved
// too).
func checkNoEscape(base, target string) error {
	realBase, err := filepath.EvalSymlinks(base)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // nothing exists yet, so nothing can escape
		}
		return fmt.Errorf("resolving %s: %w", base, err)
	}
	existing := target
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return nil
		}
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", existing, err)
	}
	if !within(realBase, real) {
		return fmt.Errorf("%w %q: it leads outside %s through a symbolic link", ErrUnsafePath, target, base)
	}
	return nil
}
