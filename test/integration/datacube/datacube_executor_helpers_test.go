package datacube

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
	"github.com/accelstack/accelstack/test/harness"
)

// executorRun is the outcome of one datacube-executor process.
type executorRun struct {
	code     int
	output   string
	progress executorenv.Progress
}

// runExecutor runs the executor binary with the contract's environment env
// and the PVC root pvcRoot, and reads its termination message.
func runExecutor(t *testing.T, pvcRoot string, env map[string]string, args ...string) executorRun {
	t.Helper()
	bin, err := harness.BuildCmd("datacube-executor")
	if err != nil {
		t.Fatal(err)
	}
	term := filepath.Join(t.TempDir(), "termination-log")
	cmd := exec.Command(bin, append([]string{"--pvc-root", pvcRoot, "--termination-message-path", term}, args...)...)
	cmd.Env = executorEnv(t, env)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	r := executorRun{output: out.String()}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		r.code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("running the executor: %v", err)
	}
	b, err := os.ReadFile(term)
	if err != nil {
		t.Fatalf("no termination message (exit %d): %v\n%s", r.code, err, r.output)
	}
	if err := json.Unmarshal(b, &r.progress); err != nil {
		t.Fatalf("termination message %q: %v", b, err)
	}
	return r
}

// executorEnv returns the whole environment of an executor process: env
// plus PATH (for git) and an empty HOME, and nothing else of the test's
// environment (no proxies, no git or S3 settings).
func executorEnv(t *testing.T, env map[string]string) []string {
	t.Helper()
	out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// s3Env returns the contract's options of an S3 side.
func s3Env(prefix string, s *harness.S3Server, uri string) map[string]string {
	return map[string]string{
		executorenv.OptionEnv(prefix, "s3-endpoint"):          s.Endpoint,
		executorenv.OptionEnv(prefix, "s3-access-key-id"):     s.AccessKey,
		executorenv.OptionEnv(prefix, "s3-secret-access-key"): s.SecretKey,
		executorenv.OptionEnv(prefix, "s3-uri"):               uri,
	}
}

// merge returns the union of maps, later ones winning.
func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// writeTree creates files (slash paths relative to dir) with the given sizes
// of random bytes.
func writeTree(t *testing.T, dir string, files map[string]int) {
	t.Helper()
	for rel, size := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, size)
		_, _ = rand.Read(b)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree returns the regular files below dir by slash path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if d.Name() == ".git" || strings.Contains(p, "/.git/") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTrees fails the test unless the two trees hold the same files.
func sameTrees(t *testing.T, want, got map[string][]byte) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("got %d files, want %d", len(got), len(want))
	}
	for p, b := range want {
		if !bytes.Equal(got[p], b) {
			t.Errorf("file %s differs (%d bytes, want %d)", p, len(got[p]), len(b))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("unexpected file %s", p)
		}
	}
}
