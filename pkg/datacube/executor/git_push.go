package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/klog/v2"
)

// GitPush commits everything in pvcDir/<repo name> and pushes it to side's
// url: a directory that is not yet a repository is pushed as a first commit
// on branch ref (default master); a repository's current branch is pushed
// to the same branch, with a commit on top of its HEAD.
//
// Git works in a git directory of its own outside the PVC (which may be
// read-only) and reads an existing repository's objects as alternates: its
// hooks and configuration never run, and the PVC is not written.
func GitPush(ctx context.Context, side Side, pvcDir string, redactor *Redactor, c *Counter) error {
	g, err := newGit(side, redactor)
	if err != nil {
		return err
	}
	dir, err := JoinRel(pvcDir, g.remote.Name)
	if err != nil {
		return err
	}
	if err := checkNoEscape(pvcDir, dir); err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("the directory %s to push (the repository name from the url) does not exist in the PVC", g.remote.Name)
	}
	branch, parent := "", ""
	if dotGit := filepath.Join(dir, ".git"); isRealDir(dotGit) {
		branch, parent = readHead(dotGit)
		if objects := filepath.Join(dotGit, "objects"); isRealDir(objects) {
			g.alternates = objects
		}
	}
	if branch == "" {
		branch = side.Option(OptRef, gitDefaultRef)
	}
	if err := checkRef(branch); err != nil {
		return err
	}
	if g.gitDir, err = os.MkdirTemp("", "datacube-git-"); err != nil {
		return fmt.Errorf("creating a git directory: %w", err)
	}
	defer os.RemoveAll(g.gitDir)
	if err := g.init(ctx, branch); err != nil {
		return err
	}
	g.workTree = dir
	if g.hasCommit(ctx, parent) {
		if _, err := g.run(ctx, "update-ref", "refs/heads/"+branch, parent); err != nil {
			return err
		}
		if _, err := g.run(ctx, "read-tree", "HEAD"); err != nil {
			return err
		}
	}
	if _, err := g.run(ctx, "add", "--all"); err != nil {
		return err
	}
	if _, err := g.run(ctx, "diff", "--cached", "--quiet"); err != nil {
		if _, err := g.run(ctx, "commit", "--quiet", "--no-verify", "--message", gitCommitMessage); err != nil {
			return err
		}
	}
	if _, err := g.run(ctx, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		return errors.New("nothing to push: the directory is empty")
	}
	klog.FromContext(ctx).Info("Pushing", "url", g.remote.URL, "branch", branch, "dir", dir)
	if _, err := g.run(ctx, "push", "--quiet", "--no-verify", "--", g.remote.URL, "HEAD:refs/heads/"+branch); err != nil {
		return err
	}
	return countTree(ctx, dir, c)
}
