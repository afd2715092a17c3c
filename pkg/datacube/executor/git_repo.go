package executor

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// A .git directory found in the PVC is not trusted: anyone who can write
// the PVC can plant hooks or configuration in it that git would run. The
// executor reads only its HEAD (as data) and its object store (as
// alternates or GIT_OBJECT_DIRECTORY, which hold no programs), and does
// everything else in a git directory of its own.

// shaPattern matches a full SHA-1 or SHA-256 object name.
var shaPattern = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// maxRefFile bounds what is read of HEAD, a ref file or packed-refs.
const maxRefFile = 64 << 20

// isRealDir reports whether p is a directory and not a symbolic link.
func isRealDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// readRefFile returns the first line of a regular file below dotGit.
func readRefFile(dotGit, rel string) (string, bool) {
	p := filepath.Join(dotGit, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxRefFile {
		return "", false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), true
}

// readHead reads the branch and commit of a .git directory's HEAD without
// running git: branch is empty for a detached HEAD, sha empty for an unborn
// branch or anything unreadable. Neither is trusted beyond being a name:
// the branch goes through checkRef, the sha must exist in the repository.
func readHead(dotGit string) (branch, sha string) {
	head, ok := readRefFile(dotGit, "HEAD")
	if !ok {
		return "", ""
	}
	if shaPattern.MatchString(head) {
		return "", head
	}
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok || !strings.HasPrefix(ref, "refs/heads/") || CheckRelPath(ref) != nil {
		return "", ""
	}
	branch = strings.TrimPrefix(ref, "refs/heads/")
	if s, ok := readRefFile(dotGit, ref); ok && shaPattern.MatchString(s) {
		return branch, s
	}
	return branch, packedRef(dotGit, ref)
}

// packedRef looks ref up in packed-refs.
func packedRef(dotGit, ref string) string {
	p := filepath.Join(dotGit, "packed-refs")
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxRefFile))
	for sc.Scan() {
		sha, name, ok := strings.Cut(sc.Text(), " ")
		if ok && name == ref && shaPattern.MatchString(sha) {
			return sha
		}
	}
	return ""
}

// installGitDir makes dotGit the git directory src: everything in dotGit
// but its objects (hooks, config, info, worktrees...) is removed, then src's
// files but objects are copied in. The objects are expected to be in place
// already.
func installGitDir(src, dotGit string) error {
	if err := os.MkdirAll(dotGit, 0o755); err != nil {
		return err
	}
	old, err := os.ReadDir(dotGit)
	if err != nil {
		return err
	}
	for _, e := range old {
		if e.Name() == "objects" && e.IsDir() {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dotGit, e.Name())); err != nil {
			return err
		}
	}
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if rel == "objects" {
			return filepath.SkipDir
		}
		dst := filepath.Join(dotGit, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(dst, 0o755)
		case d.Type().IsRegular():
			return copyFile(p, dst)
		}
		return errors.New("unexpected file type in a git directory: " + rel)
	})
}

// copyFile copies a regular file to a path that must not exist.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return fmt.Errorf("copying %s: %w", src, err)
	}
	return out.Close()
}
