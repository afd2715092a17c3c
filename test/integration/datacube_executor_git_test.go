package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accelstack/accelstack/pkg/datacube"
	"github.com/accelstack/accelstack/pkg/datacube/executor"
	"github.com/accelstack/accelstack/test/harness"
)

// git runs git in dir and returns its output.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
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
func runInProcess(t *testing.T, pvcRoot string, env map[string]string) (datacube.Progress, error) {
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
				datacube.EnvSourceType:                                 datacube.TypeGit,
				datacube.EnvSinkType:                                   datacube.TypePVC,
				datacube.EnvSinkPVCPath:                                filepath.Join(root, "sub"),
				datacube.OptionEnv(datacube.SourceOptionPrefix, "url"): "file://" + filepath.Join(repos, "models.git"),
				datacube.OptionEnv(datacube.SourceOptionPrefix, "ref"): tc.ref,
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
			env[datacube.OptionEnv(datacube.SourceOptionPrefix, "ref")] = "dev"
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
		datacube.EnvSourceType:                                   datacube.TypeGit,
		datacube.EnvSinkType:                                     datacube.TypePVC,
		datacube.EnvSinkPVCPath:                                  filepath.Join(root, "ws"),
		datacube.OptionEnv(datacube.SourceOptionPrefix, "url"):   u,
		datacube.OptionEnv(datacube.SourceOptionPrefix, "token"): token,
	}
	r := runExecutor(t, root, clone, "-v=5")
	if r.code != 0 || r.progress.Files != 2 {
		t.Fatalf("clone = exit %d, %+v\n%s", r.code, r.progress, r.output)
	}
	cfg, err := os.ReadFile(filepath.Join(root, "ws", "data", ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), token) || strings.Contains(r.output, token) {
		t.Errorf("the token leaked into .git/config or the output:\n%s\n%s", cfg, r.output)
	}

	// Push a change back: the sink pushes <subPath>/<repo name>.
	if err := os.WriteFile(filepath.Join(root, "ws", "data", "new.txt"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	push := map[string]string{
		datacube.EnvSourceType:                                 datacube.TypePVC,
		datacube.EnvSourcePVCPath:                              filepath.Join(root, "ws"),
		datacube.EnvSinkType:                                   datacube.TypeGit,
		datacube.OptionEnv(datacube.SinkOptionPrefix, "url"):   u,
		datacube.OptionEnv(datacube.SinkOptionPrefix, "token"): token,
	}
	r = runExecutor(t, root, push, "-v=5")
	if r.code != 0 || strings.Contains(r.output, token) {
		t.Fatalf("push = exit %d, %+v\n%s", r.code, r.progress, r.output)
	}
	if got := gitCmd(t, filepath.Join(repos, "data.git"), "show", "master:new.txt"); got != "new" {
		t.Errorf("master:new.txt = %q after the push", got)
	}

	// A fresh directory (no .git) is initialised and pushed as a new branch.
	writeTree(t, filepath.Join(root, "fresh", "data"), map[string]int{"x.bin": 100})
	fresh := merge(push, map[string]string{
		datacube.EnvSourcePVCPath:                            filepath.Join(root, "fresh"),
		datacube.OptionEnv(datacube.SinkOptionPrefix, "ref"): "upload",
	})
	if r := runExecutor(t, root, fresh); r.code != 0 {
		t.Fatalf("fresh push = exit %d\n%s", r.code, r.output)
	}
	gitCmd(t, filepath.Join(repos, "data.git"), "cat-file", "-e", "upload:x.bin")

	bad := merge(clone, map[string]string{
		datacube.EnvSinkPVCPath:                                  filepath.Join(root, "bad"),
		datacube.OptionEnv(datacube.SourceOptionPrefix, "token"): "wrong-token-value",
	})
	r = runExecutor(t, root, bad)
	if r.code != 1 || !strings.Contains(r.progress.Error, "git clone") || strings.Contains(r.output, "wrong-token-value") || strings.Contains(r.progress.Error, "wrong-token-value") {
		t.Errorf("clone with a wrong token = exit %d, error %q\n%s", r.code, r.progress.Error, r.output)
	}
}
