package datacube

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accelstack/accelstack/pkg/datacube/executor"
	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
	"github.com/accelstack/accelstack/test/harness"
)

// gitCmd runs git in dir and returns its output. It trusts repositories of
// any owner and reads no configuration but the repository's.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// makeBareRepo creates root/name.git with branch master (v1: a.txt), tag
// v1, then a second commit (v2: a.txt changed, b/c.txt) on master and a
// branch dev with d.txt. It returns the commit of v1.
func makeBareRepo(t *testing.T, root, name string) string {
	t.Helper()
	work := filepath.Join(t.TempDir(), name)
	gitCmd(t, "", "init", "--quiet", "--initial-branch=master", work)
	writeFile := func(rel, s string) {
		p := filepath.Join(work, rel)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile("a.txt", "v1")
	gitCmd(t, work, "add", "-A")
	gitCmd(t, work, "commit", "--quiet", "-m", "v1")
	gitCmd(t, work, "tag", "v1")
	v1 := gitCmd(t, work, "rev-parse", "HEAD")
	writeFile("a.txt", "v2")
	writeFile("b/c.txt", "c")
	gitCmd(t, work, "add", "-A")
	gitCmd(t, work, "commit", "--quiet", "-m", "v2")
	gitCmd(t, work, "checkout", "--quiet", "-b", "dev")
	writeFile("d.txt", "d")
	gitCmd(t, work, "add", "-A")
	gitCmd(t, work, "commit", "--quiet", "-m", "dev")
	gitCmd(t, work, "checkout", "--quiet", "master")
	gitCmd(t, "", "clone", "--quiet", "--bare", work, filepath.Join(root, name+".git"))
	return v1
}

// runInProcess runs executor.Run with env as the whole environment.
func runInProcess(t *testing.T, pvcRoot string, env map[string]string) (executorenv.Progress, error) {
	t.Helper()
	cfg := executor.Config{PVCRoot: pvcRoot, Concurrency: 4, PartSize: 5 << 20}
	if err := cfg.FromEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	return executor.Run(context.Background(), cfg)
}

func contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range readTree(t, dir) {
		out[k] = string(v)
	}
	return out
}

// TestDataCubeExecutorGitClone clones file:// repositories at a branch, a
// tag, a commit and the default ref, updates an existing clone, and refuses
// a missing ref.
func TestDataCubeExecutorGitClone(t *testing.T) {
	repos := t.TempDir()
	v1 := makeBareRepo(t, repos, "models")
	testCases := []struct {
		name, ref string
		want      map[string]string
		wantErr   string
	}{
		{name: "default master", want: map[string]string{"a.txt": "v2", "b/c.txt": "c"}},
		{name: "branch", ref: "dev", want: map[string]string{"a.txt": "v2", "b/c.txt": "c", "d.txt": "d"}},
		{name: "tag", ref: "v1", want: map[string]string{"a.txt": "v1"}},
		{name: "commit", ref: v1, want: map[string]string{"a.txt": "v1"}},
		{name: "missing ref", ref: "nope", wantErr: "checking out ref \"nope\""},
		{name: "option-like ref", ref: "--upload-pack=touch", wantErr: "invalid ref"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			env := map[string]string{
				executorenv.EnvSourceType:                                    executorenv.TypeGit,
				executorenv.EnvSinkType:                                      executorenv.TypePVC,
				executorenv.EnvSinkPVCPath:                                   filepath.Join(root, "sub"),
				executorenv.OptionEnv(executorenv.SourceOptionPrefix, "url"): "file://" + filepath.Join(repos, "models.git"),
				executorenv.OptionEnv(executorenv.SourceOptionPrefix, "ref"): tc.ref,
			}
			p, err := runInProcess(t, root, env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Run error = %v, want %q", err, tc.wantErr)
				}
				if _, err := os.Stat(filepath.Join(root, "sub", "models")); err == nil {
					t.Error("a failed clone left sub/models behind")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := contents(t, filepath.Join(root, "sub", "models"))
			if len(got) != len(tc.want) || p.Files != int64(len(tc.want)) {
				t.Fatalf("got %v (progress %+v), want %v", got, p, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			// A rerun on the existing clone moves it to another ref.
			env[executorenv.OptionEnv(executorenv.SourceOptionPrefix, "ref")] = "dev"
			if _, err := runInProcess(t, root, env); err != nil {
				t.Fatalf("rerun: %v", err)
			}
			if got := contents(t, filepath.Join(root, "sub", "models")); got["d.txt"] != "d" || got["a.txt"] != "v2" {
				t.Errorf("after the rerun at dev: %v", got)
			}
		})
	}
}

// TestDataCubeExecutorGitToken clones and pushes over smart HTTP (git
// http-backend) with a token from the url's $(TOKEN), through the binary,
// and checks the token is in no output, no progress and no .git/config; a
// wrong token fails clearly.
func TestDataCubeExecutorGitToken(t *testing.T) {
	const token = "ghp_SECRETtoken123"
	repos := t.TempDir()
	makeBareRepo(t, repos, "data")
	srv := harness.StartGitHTTP(t, repos, token)
	u := strings.Replace(srv.URL, "http://", "http://$(TOKEN)@", 1) + "/data.git"
	root := t.TempDir()
	clone := map[string]string{
		executorenv.EnvSourceType:                                      executorenv.TypeGit,
		executorenv.EnvSinkType:                                        executorenv.TypePVC,
		executorenv.EnvSinkPVCPath:                                     filepath.Join(root, "ws"),
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, "url"):   u,
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, "token"): token,
	}
	r := runExecutor(t, root, clone, "-v=5")
	if r.code != 0 || r.progress.Files != 2 {
		t.Fatalf("clone = exit %d, %+v\n%s", r.code, r.progress, r.output)
	}
	cfg, err := os.ReadFile(filepath.Join(root, "ws", "data", ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if f := leaked(string(cfg)+r.output+r.progress.Error, token); len(f) > 0 {
		t.Errorf("the token leaked as %q into .git/config or the output:\n%s\n%s", f, cfg, r.output)
	}

	// Push a change back: the sink pushes <subPath>/<repo name>.
	if err := os.WriteFile(filepath.Join(root, "ws", "data", "new.txt"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	push := map[string]string{
		executorenv.EnvSourceType:                                    executorenv.TypePVC,
		executorenv.EnvSourcePVCPath:                                 filepath.Join(root, "ws"),
		executorenv.EnvSinkType:                                      executorenv.TypeGit,
		executorenv.OptionEnv(executorenv.SinkOptionPrefix, "url"):   u,
		executorenv.OptionEnv(executorenv.SinkOptionPrefix, "token"): token,
	}
	r = runExecutor(t, root, push, "-v=5")
	if r.code != 0 || len(leaked(r.output+r.progress.Error, token)) > 0 {
		t.Fatalf("push = exit %d, %+v\n%s", r.code, r.progress, r.output)
	}
	if got := gitCmd(t, filepath.Join(repos, "data.git"), "show", "master:new.txt"); got != "new" {
		t.Errorf("master:new.txt = %q after the push", got)
	}

	// A fresh directory (no .git) is initialised and pushed as a new branch.
	writeTree(t, filepath.Join(root, "fresh", "data"), map[string]int{"x.bin": 100})
	fresh := merge(push, map[string]string{
		executorenv.EnvSourcePVCPath:                               filepath.Join(root, "fresh"),
		executorenv.OptionEnv(executorenv.SinkOptionPrefix, "ref"): "upload",
	})
	if r := runExecutor(t, root, fresh, "-v=5"); r.code != 0 || len(leaked(r.output+r.progress.Error, token)) > 0 {
		t.Fatalf("fresh push = exit %d\n%s", r.code, r.output)
	}
	gitCmd(t, filepath.Join(repos, "data.git"), "cat-file", "-e", "upload:x.bin")

	bad := merge(clone, map[string]string{
		executorenv.EnvSinkPVCPath:                                     filepath.Join(root, "bad"),
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, "token"): "wrong-token-value",
	})
	r = runExecutor(t, root, bad)
	if r.code != 1 || !strings.Contains(r.progress.Error, "Authentication failed") || len(leaked(r.output+r.progress.Error, "wrong-token-value")) > 0 {
		t.Errorf("clone with a wrong token = exit %d, error %q\n%s", r.code, r.progress.Error, r.output)
	}
}

// tokenForms returns the forms in which a git token can leak: raw, and the
// base64 of the Basic credentials the executor builds from it.
func tokenForms(token string) []string {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	return []string{token, b64(token + ":"), b64("oauth2:" + token), b64(token)}
}

// leaked returns the forms of token found in s.
func leaked(s, token string) []string {
	var out []string
	for _, f := range tokenForms(token) {
		if strings.Contains(s, f) {
			out = append(out, f)
		}
	}
	return out
}

// plantRepoTraps makes the repository at dir run markerScript (which writes
// its environment below markers) from a hook, core.fsmonitor and a smudge
// and clean filter, and checks with the plain git CLI that each trap fires.
func plantRepoTraps(t *testing.T, dir, markers string) {
	t.Helper()
	script := filepath.Join(markers, "trap.sh")
	body := "#!/bin/sh\nenv > \"" + markers + "/fired-$(basename \"$0\")-$$\"\nexec cat\n"
	write := func(p, s string, mode os.FileMode) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(script, body, 0o755)
	for _, hook := range []string{"post-checkout", "pre-commit", "post-commit", "pre-push", "reference-transaction", "pre-auto-gc"} {
		write(filepath.Join(dir, ".git", "hooks", hook), body, 0o755)
	}
	write(filepath.Join(markers, "fsmonitor"), body, 0o755)
	write(filepath.Join(markers, "smudge"), body, 0o755)
	f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "[core]\n\tfsmonitor = %s/fsmonitor\n[filter \"trap\"]\n\tsmudge = %s/smudge\n\tclean = %s/smudge\n\trequired = true\n", markers, markers, markers)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(dir, ".git", "info", "attributes"), "* filter=trap\n", 0o644)

	// The traps work: plain git fires each of them.
	_ = os.Remove(filepath.Join(dir, "a.txt"))
	gitCmd(t, dir, "checkout", "--quiet", "--force", "-B", "trapcheck")
	gitCmd(t, dir, "status", "--short")
	for _, kind := range []string{"post-checkout", "fsmonitor", "smudge"} {
		if m, _ := filepath.Glob(filepath.Join(markers, "fired-"+kind+"-*")); len(m) == 0 {
			t.Fatalf("the %s trap does not fire with plain git", kind)
		}
	}
	gitCmd(t, dir, "checkout", "--quiet", "master")
	m, _ := filepath.Glob(filepath.Join(markers, "fired-*"))
	for _, p := range m {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDataCubeExecutorGitUntrustedRepo plants hooks, core.fsmonitor and a
// filter driver in the .git of a clone in the PVC, hands the tree to
// another uid (as a shared PVC written by another user would be), and
// checks that updating the clone and pushing from it over HTTP with a token
// works and runs none of them.
func TestDataCubeExecutorGitUntrustedRepo(t *testing.T) {
	const token = "ghp_UNTRUSTEDtoken42"
	repos := t.TempDir()
	makeBareRepo(t, repos, "data")
	srv := harness.StartGitHTTP(t, repos, token)
	u := strings.Replace(srv.URL, "http://", "http://$(TOKEN)@", 1) + "/data.git"
	root := t.TempDir()
	markers := t.TempDir()
	clone := map[string]string{
		executorenv.EnvSourceType:                                      executorenv.TypeGit,
		executorenv.EnvSinkType:                                        executorenv.TypePVC,
		executorenv.EnvSinkPVCPath:                                     filepath.Join(root, "ws"),
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, "url"):   u,
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, "ref"):   "v1",
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, "token"): token,
	}
	if r := runExecutor(t, root, clone); r.code != 0 {
		t.Fatalf("clone = exit %d\n%s", r.code, r.output)
	}
	dir := filepath.Join(root, "ws", "data")
	plantRepoTraps(t, dir, markers)
	chownTree(t, dir, 4242)

	fired := func(step string) {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(markers, "fired-*"))
		for _, p := range m {
			b, _ := os.ReadFile(p)
			t.Errorf("%s ran %s; token forms in its environment: %q", step, filepath.Base(p), leaked(string(b), token))
			_ = os.Remove(p)
		}
	}
	clone[executorenv.OptionEnv(executorenv.SourceOptionPrefix, "ref")] = "dev"
	r := runExecutor(t, root, clone)
	if r.code != 0 {
		t.Fatalf("clone update = exit %d, %+v\n%s", r.code, r.progress, r.output)
	}
	fired("the clone update")
	if got := contents(t, dir); got["d.txt"] != "d" || got["a.txt"] != "v2" || got["b/c.txt"] != "c" {
		t.Errorf("after the update at dev: %v", got)
	}
	if head := gitCmd(t, dir, "rev-parse", "HEAD"); head != gitCmd(t, filepath.Join(repos, "data.git"), "rev-parse", "dev") {
		t.Errorf("the clone's HEAD is %s, not dev", head)
	}
	for _, p := range []string{"hooks", "info/attributes"} {
		if _, err := os.Lstat(filepath.Join(dir, ".git", p)); err == nil {
			t.Errorf(".git/%s survived the update", p)
		}
	}

	plantRepoTraps(t, dir, markers)
	gitCmd(t, dir, "checkout", "--quiet", "dev")
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "d.txt")); err != nil {
		t.Fatal(err)
	}
	m, _ := filepath.Glob(filepath.Join(markers, "fired-*"))
	for _, p := range m {
		_ = os.Remove(p)
	}
	chownTree(t, dir, 4242)
	push := map[string]string{
		executorenv.EnvSourceType:                                    executorenv.TypePVC,
		executorenv.EnvSourcePVCPath:                                 filepath.Join(root, "ws"),
		executorenv.EnvSinkType:                                      executorenv.TypeGit,
		executorenv.OptionEnv(executorenv.SinkOptionPrefix, "url"):   u,
		executorenv.OptionEnv(executorenv.SinkOptionPrefix, "token"): token,
	}
	r = runExecutor(t, root, push)
	if r.code != 0 {
		t.Fatalf("push = exit %d, %+v\n%s", r.code, r.progress, r.output)
	}
	fired("the push")
	bare := filepath.Join(repos, "data.git")
	if got := gitCmd(t, bare, "show", "dev:new.txt"); got != "new" {
		t.Errorf("dev:new.txt = %q after the push", got)
	}
	if out, err := exec.Command("git", "-C", bare, "cat-file", "-e", "dev:d.txt").CombinedOutput(); err == nil {
		t.Errorf("dev:d.txt still exists after pushing its deletion: %s", out)
	}
	if got := gitCmd(t, bare, "rev-list", "--count", "dev"); got != "4" {
		t.Errorf("dev has %s commits after the push, want 4 (the pushed commit on top of dev)", got)
	}
	if f := leaked(r.output+r.progress.Error, token); len(f) > 0 {
		t.Errorf("the push output holds the token as %q", f)
	}
}

// chownTree gives dir and everything below it to uid.
func chownTree(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}
