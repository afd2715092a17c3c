package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"k8s.io/klog/v2"
)

// gitDefaultRef is the ref of a git source without the ref option.
const gitDefaultRef = "master"

// gitCommitMessage is the message of the commit a git sink pushes.
const gitCommitMessage = "Upload from DataCube"

// git runs the git CLI with credentials in its environment.
type git struct {
	remote   gitRemote
	redactor *Redactor
}

// run runs git with args in dir and returns its trimmed standard output;
// an error carries git's messages, redacted.
func (g *git) run(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	env := append(os.Environ(),
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=true",
		"GIT_SSH_COMMAND=ssh -o BatchMode=yes",
	)
	for _, kv := range [][2]string{{"GIT_AUTHOR_NAME", "DataCube"}, {"GIT_AUTHOR_EMAIL", "datacube@tensorstack.dev"}, {"GIT_COMMITTER_NAME", "DataCube"}, {"GIT_COMMITTER_EMAIL", "datacube@tensorstack.dev"}} {
		if os.Getenv(kv[0]) == "" {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	if g.remote.AuthHeader != "" {
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0="+g.remote.AuthHeader)
	}
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	klog.V(2).InfoS("Running git", "args", g.redactor.String(strings.Join(args, " ")), "dir", dir)
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, g.redactor.String(msg))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// newGit parses the url and token options of side.
func newGit(side Side, redactor *Redactor) (*git, error) {
	r, err := parseGitRemote(side.Options[OptURL], side.Options[OptToken])
	if err != nil {
		return nil, err
	}
	if r.AuthHeader != "" {
		redactor = NewRedactor(append(redactor.secretList(), strings.TrimPrefix(r.AuthHeader, "Authorization: Basic "))...)
	}
	return &git{remote: r, redactor: redactor}, nil
}

// checkRef refuses a ref git could take for an option or that is malformed.
func checkRef(ref string) error {
	if ref == "" || strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, " \t\n\\:?*[~^") || strings.Contains(ref, "..") {
		return fmt.Errorf("invalid %s %q", OptRef, ref)
	}
	return nil
}

// GitClone clones the repository of side's url into pvcDir/<repo name> and
// checks out the ref option (a branch, tag or commit; default master). If
// the directory already holds a clone, it is fetched and checked out again,
// which also resumes a failed attempt. A first clone is made under a
// temporary name and renamed when checked out.
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
	work := dir
	if _, err := os.Stat(dir + "/.git"); err == nil {
		klog.InfoS("Updating an existing clone", "dir", dir, "ref", ref)
		if _, err := g.run(ctx, dir, "remote", "set-url", "origin", g.remote.URL); err != nil {
			return err
		}
		if _, err := g.run(ctx, dir, "fetch", "--prune", "--tags", "--force", "origin", "+refs/heads/*:refs/remotes/origin/*"); err != nil {
			return err
		}
	} else {
		if _, err := os.Stat(dir); err == nil {
			return fmt.Errorf("%s exists and is not a git repository", g.remote.Name)
		}
		work = partialPath(dir)
		if err := os.RemoveAll(work); err != nil {
			return fmt.Errorf("removing an earlier partial clone: %w", err)
		}
		klog.InfoS("Cloning", "url", g.remote.URL, "ref", ref, "dir", dir)
		if _, err := g.run(ctx, pvcDir, "clone", "--quiet", "--no-checkout", "--", g.remote.URL, work); err != nil {
			return err
		}
	}
	if _, err := g.run(ctx, work, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+ref+"^{commit}"); err == nil {
		_, err = g.run(ctx, work, "checkout", "--quiet", "--force", "-B", ref, "refs/remotes/origin/"+ref)
		if err != nil {
			return err
		}
	} else if _, err := g.run(ctx, work, "checkout", "--quiet", "--force", "--detach", ref+"^{commit}"); err != nil {
		return fmt.Errorf("checking out %s %q: %w", OptRef, ref, err)
	}
	if work != dir {
		if err := os.Rename(work, dir); err != nil {
			return fmt.Errorf("moving the clone into place: %w", err)
		}
	}
	return countTree(dir, c)
}

// GitPush commits everything in pvcDir/<repo name> and pushes it to side's
// url: a directory that is not yet a repository is initialised on branch
// master; a repository's current branch is pushed to the same branch.
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
	if _, err := os.Stat(dir + "/.git"); err != nil {
		branch := side.Option(OptRef, gitDefaultRef)
		if err := checkRef(branch); err != nil {
			return err
		}
		if _, err := g.run(ctx, dir, "init", "--quiet", "--initial-branch="+branch); err != nil {
			return err
		}
	}
	if _, err := g.run(ctx, dir, "add", "--all"); err != nil {
		return err
	}
	if _, err := g.run(ctx, dir, "diff", "--cached", "--quiet"); err != nil {
		if _, err := g.run(ctx, dir, "commit", "--quiet", "--message", gitCommitMessage); err != nil {
			return err
		}
	}
	if _, err := g.run(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		return errors.New("nothing to push: the directory is empty")
	}
	branch, err := g.run(ctx, dir, "symbolic-ref", "--short", "--quiet", "HEAD")
	if err != nil || branch == "" {
		branch = side.Option(OptRef, gitDefaultRef)
	}
	if err := checkRef(branch); err != nil {
		return err
	}
	klog.InfoS("Pushing", "url", g.remote.URL, "branch", branch, "dir", dir)
	if _, err := g.run(ctx, dir, "push", "--quiet", "--", g.remote.URL, "HEAD:refs/heads/"+branch); err != nil {
		return err
	}
	return countTree(dir, c)
}

// countTree counts the files of a work tree (without .git) as transferred.
func countTree(dir string, c *Counter) error {
	files, err := listLocal(dir, ".git")
	if err != nil {
		return err
	}
	for _, f := range files {
		c.Done(f.Size)
	}
	return nil
}
