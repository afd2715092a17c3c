package executor

import (
	"bytes"
	"context"
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

// gitSafeConfig overrides, on every git command line, the settings through
// which a repository's configuration could run a program or redirect
// credentials. Git never reads the configuration or hooks of a .git found
// in the PVC (see gitRepo); these are a second line of defence.
var gitSafeConfig = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.attributesFile=/dev/null",
	"-c", "core.excludesFile=/dev/null",
	"-c", "credential.helper=",
	"-c", "protocol.ext.allow=never",
	"-c", "commit.gpgSign=false",
}

// gitPassEnv are the variables of the executor's environment that git
// inherits: proxies, CA bundles and the commit identity. Everything else,
// the other options' values included, stays out of git's environment.
var gitPassEnv = []string{
	"PATH", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
}

// git runs the git CLI on one repository with credentials in its
// environment. The git directory is always one the executor created
// (never a .git found in the PVC); objects and alternates may live
// elsewhere.
type git struct {
	remote   gitRemote
	redactor *Redactor
	// gitDir is the git directory; workTree the work tree, may be empty.
	gitDir, workTree string
	// objects and alternates are GIT_OBJECT_DIRECTORY and
	// GIT_ALTERNATE_OBJECT_DIRECTORIES when set.
	objects, alternates string
}

// env returns git's environment: no system or global configuration, no
// prompts, and nothing of the executor's environment but gitPassEnv.
func (g *git) env() []string {
	env := []string{
		"HOME=" + g.gitDir,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=true",
		"GIT_SSH_COMMAND=ssh -o BatchMode=yes",
		"LC_ALL=C",
	}
	defaults := map[string]string{
		"PATH":                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"GIT_AUTHOR_NAME":     "DataCube",
		"GIT_AUTHOR_EMAIL":    "datacube@tensorstack.dev",
		"GIT_COMMITTER_NAME":  "DataCube",
		"GIT_COMMITTER_EMAIL": "datacube@tensorstack.dev",
	}
	for _, k := range gitPassEnv {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		} else if d := defaults[k]; d != "" {
			env = append(env, k+"="+d)
		}
	}
	if g.objects != "" {
		env = append(env, "GIT_OBJECT_DIRECTORY="+g.objects)
	}
	if g.alternates != "" {
		env = append(env, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+g.alternates)
	}
	if g.remote.AuthHeader != "" {
		env = append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0="+g.remote.AuthHeader)
	}
	return env
}

// run runs git with args on the repository and returns its trimmed
// standard output; an error carries git's messages, redacted.
func (g *git) run(ctx context.Context, args ...string) (string, error) {
	argv := append([]string(nil), gitSafeConfig...)
	argv = append(argv, "--git-dir="+g.gitDir)
	dir := g.gitDir
	if g.workTree != "" {
		argv = append(argv, "--work-tree="+g.workTree)
		dir = g.workTree
	}
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Dir = dir
	cmd.Env = g.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	klog.FromContext(ctx).V(2).Info("Running git", "args", g.redactor.String(strings.Join(args, " ")), "workTree", g.workTree)
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, g.redactor.String(msg))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// init creates the git directory on branch, with no template (no sample
// hooks) and the origin remote.
func (g *git) init(ctx context.Context, branch string) error {
	if _, err := g.run(ctx, "init", "--quiet", "--template=", "--initial-branch="+branch); err != nil {
		return err
	}
	if _, err := g.run(ctx, "config", "core.bare", "false"); err != nil {
		return err
	}
	if _, err := g.run(ctx, "config", "core.logAllRefUpdates", "true"); err != nil {
		return err
	}
	_, err := g.run(ctx, "remote", "add", "origin", g.remote.URL)
	return err
}

// hasCommit reports whether the repository holds commit sha.
func (g *git) hasCommit(ctx context.Context, sha string) bool {
	if sha == "" {
		return false
	}
	_, err := g.run(ctx, "cat-file", "-e", sha+"^{commit}")
	return err == nil
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

// countTree counts the files of a work tree (without .git) as transferred.
func countTree(ctx context.Context, dir string, c *Counter) error {
	files, err := listLocal(ctx, dir, ".git")
	if err != nil {
		return err
	}
	for _, f := range files {
		c.Done(f.Size)
	}
	return nil
}
