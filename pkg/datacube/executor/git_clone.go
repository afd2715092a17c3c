package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/klog/v2"
)

// GitClone clones the repository of side's url into pvcDir/<repo name> and
// checks out the ref option (a branch, tag or commit; default master). If
// the directory already holds a clone, it is fetched and checked out again,
// which also resumes a failed attempt. A first clone is made under a
// temporary name and renamed when checked out.
//
// Git works in a git directory of its own outside the PVC and reuses only
// the object store of an existing clone; its .git is then replaced with
// that directory, so hooks and configuration found in the PVC never run.
func GitClone(ctx context.Context, side Side, pvcDir string, redactor *Redactor, c *Counter) error {
	g, err := newGit(side, redactor)
	if err != nil {
		return err
	}
	ref := side.Option(OptRef, gitDefaultRef)
	if err := checkRef(ref); err != nil {
		return err
	}
	dir, err := JoinRel(pvcDir, g.remote.Name)
	if err != nil {
		return err
	}
	if err := checkNoEscape(pvcDir, dir); err != nil {
		return err
	}
	if err := os.MkdirAll(pvcDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", pvcDir, err)
	}
	if g.gitDir, err = os.MkdirTemp("", "datacube-git-"); err != nil {
		return fmt.Errorf("creating a git directory: %w", err)
	}
	defer os.RemoveAll(g.gitDir)

	work, oldHead := dir, ""
	if isRealDir(filepath.Join(dir, ".git")) {
		klog.FromContext(ctx).Info("Updating an existing clone", "dir", dir, "ref", ref)
		_, oldHead = readHead(filepath.Join(dir, ".git"))
	} else {
		if _, err := os.Lstat(dir); err == nil {
			return fmt.Errorf("%s exists and is not a git repository", g.remote.Name)
		}
		work = partialPath(dir)
		if err := os.RemoveAll(work); err != nil {
			return fmt.Errorf("removing an earlier partial clone: %w", err)
		}
		klog.FromContext(ctx).Info("Cloning", "url", g.remote.URL, "ref", ref, "dir", dir)
	}
	g.objects = filepath.Join(work, ".git", "objects")
	if !isRealDir(g.objects) {
		if err := os.RemoveAll(g.objects); err != nil {
			return fmt.Errorf("replacing the object store: %w", err)
		}
		if err := os.MkdirAll(g.objects, 0o755); err != nil {
			return fmt.Errorf("creating the object store: %w", err)
		}
	}
	if err := g.init(ctx, gitDefaultRef); err != nil {
		return err
	}
	g.workTree = work
	if _, err := g.run(ctx, "fetch", "--quiet", "--prune", "--tags", "--force", "origin", "+refs/heads/*:refs/remotes/origin/*"); err != nil {
		return err
	}
	// The index of the commit checked out before lets the checkout
	// below remove the files the new commit no longer has.
	if g.hasCommit(ctx, oldHead) {
		if _, err := g.run(ctx, "read-tree", oldHead); err != nil {
			return err
		}
	}
	if _, err := g.run(ctx, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+ref+"^{commit}"); err == nil {
		if _, err := g.run(ctx, "checkout", "--quiet", "--force", "-B", ref, "refs/remotes/origin/"+ref); err != nil {
			return err
		}
	} else if _, err := g.run(ctx, "checkout", "--quiet", "--force", "--detach", ref+"^{commit}"); err != nil {
		return fmt.Errorf("checking out %s %q: %w", OptRef, ref, err)
	}
	if err := installGitDir(g.gitDir, filepath.Join(work, ".git")); err != nil {
		return fmt.Errorf("installing the git directory: %w", err)
	}
	if work != dir {
		if err := os.Rename(work, dir); err != nil {
			return fmt.Errorf("moving the clone into place: %w", err)
		}
	}
	return countTree(ctx, dir, c)
}
