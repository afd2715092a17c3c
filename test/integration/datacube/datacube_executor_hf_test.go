package datacube

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
	"github.com/accelstack/accelstack/test/harness"
)

// TestDataCubeExecutorHuggingFace downloads a model (all files, then a files
// filter, then a rerun that skips by hash) and uploads a directory with a
// regular and an LFS file, through the binary against a local Hub.
func TestDataCubeExecutorHuggingFace(t *testing.T) {
	const token = "hf_SECRETtoken"
	hf := harness.StartFakeHF(t, token)
	big := make([]byte, 3<<20)
	_, _ = rand.Read(big)
	hf.SetFile("models/org/model", "config.json", []byte(`{"a":1}`))
	hf.SetFile("models/org/model", "model.safetensors", big)
	hf.SetFile("models/org/model", "tok/vocab.txt", []byte("a b c"))
	root := t.TempDir()
	down := map[string]string{
		executorenv.EnvSourceType:  executorenv.TypeHuggingFace,
		executorenv.EnvSinkType:    executorenv.TypePVC,
		executorenv.EnvSinkPVCPath: filepath.Join(root, "all"),
		"HF_ENDPOINT":              hf.URL,
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, "repo"):  "org/model",
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, "token"): token,
	}
	r := runExecutor(t, root, down, "--cache-dir", "/tmp/cache/hf")
	if r.code != 0 || r.progress.Files != 3 || strings.Contains(r.output, token) {
		t.Fatalf("download = exit %d, %+v\n%s", r.code, r.progress, r.output)
	}
	got := readTree(t, filepath.Join(root, "all"))
	if !bytes.Equal(got["model.safetensors"], big) || string(got["tok/vocab.txt"]) != "a b c" || len(got) != 3 {
		t.Errorf("downloaded files differ: %v", keys(got))
	}
	r = runExecutor(t, root, down)
	if r.code != 0 || r.progress.Skipped != 3 || r.progress.Files != 0 {
		t.Errorf("second download = exit %d, %+v; want 3 skipped", r.code, r.progress)
	}

	filtered := merge(down, map[string]string{
		executorenv.EnvSinkPVCPath:                                     filepath.Join(root, "some"),
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, "files"): "config.json, tok/*",
	})
	r = runExecutor(t, root, filtered)
	if got := readTree(t, filepath.Join(root, "some")); r.code != 0 || len(got) != 2 || got["config.json"] == nil || got["tok/vocab.txt"] == nil {
		t.Errorf("filtered download = exit %d, files %v\n%s", r.code, keys(got), r.output)
	}

	badToken := merge(down, map[string]string{executorenv.OptionEnv(executorenv.SourceOptionPrefix, "token"): "hf_wrong_token"})
	r = runExecutor(t, root, badToken)
	if r.code != 1 || !strings.Contains(r.progress.Error, "token is missing or invalid") || strings.Contains(r.output, "hf_wrong_token") {
		t.Errorf("download with a bad token = exit %d, error %q\n%s", r.code, r.progress.Error, r.output)
	}

	src := filepath.Join(root, "out")
	writeTree(t, src, map[string]int{"weights.bin": 2 << 20, "README.md": 100})
	up := map[string]string{
		executorenv.EnvSourceType:    executorenv.TypePVC,
		executorenv.EnvSourcePVCPath: src,
		executorenv.EnvSinkType:      executorenv.TypeHuggingFace,
		"HF_ENDPOINT":                hf.URL,
		executorenv.OptionEnv(executorenv.SinkOptionPrefix, "repo"):           "org/trained",
		executorenv.OptionEnv(executorenv.SinkOptionPrefix, "token"):          token,
		executorenv.OptionEnv(executorenv.SinkOptionPrefix, "path-in-repo"):   "ckpt",
		executorenv.OptionEnv(executorenv.SinkOptionPrefix, "commit-message"): "epoch 3",
	}
	r = runExecutor(t, root, up)
	if r.code != 0 || r.progress.Files != 2 {
		t.Fatalf("upload = exit %d, %+v\n%s", r.code, r.progress, r.output)
	}
	commits := hf.Commits()
	if len(commits) != 1 || commits[0].Summary != "epoch 3" || strings.Join(commits[0].Paths, ",") != "ckpt/README.md,lfs:ckpt/weights.bin" {
		t.Errorf("commits = %+v", commits)
	}
	want := readTree(t, src)
	for name, b := range want {
		if got, _ := hf.File("models/org/trained", "ckpt/"+name); !bytes.Equal(got, b) {
			t.Errorf("ckpt/%s differs on the Hub", name)
		}
	}

	traversal := merge(up, map[string]string{executorenv.OptionEnv(executorenv.SinkOptionPrefix, "path-in-repo"): "../x"})
	if r := runExecutor(t, root, traversal); r.code != 1 || !strings.Contains(r.progress.Error, "unsafe path") {
		t.Errorf("path-in-repo ../x = exit %d, error %q", r.code, r.progress.Error)
	}
	hf.SetFile("models/org/evil", "../../escape.txt", []byte("x"))
	evil := merge(down, map[string]string{
		executorenv.EnvSinkPVCPath:                                    filepath.Join(root, "evil"),
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, "repo"): "org/evil",
	})
	if r := runExecutor(t, root, evil); r.code != 1 || !strings.Contains(r.progress.Error, "unsafe path") {
		t.Errorf("a file named ../../escape.txt = exit %d, error %q", r.code, r.progress.Error)
	}
}

// TestDataCubeExecutorHuggingFaceIntegrity serves a regular file and an LFS
// file whose bodies do not match the listing's hashes (same size), and
// checks each download fails and leaves no file under the final name; then
// that two listed names of one file (a//b and a/b) are refused.
func TestDataCubeExecutorHuggingFaceIntegrity(t *testing.T) {
	hf := harness.StartFakeHF(t, "")
	big := make([]byte, 2<<20)
	_, _ = rand.Read(big)
	hf.SetFile("models/org/m", "small.txt", []byte("the true content"))
	hf.SetFile("models/org/m", "weights.bin", big)
	root := t.TempDir()
	for _, name := range []string{"small.txt", "weights.bin"} {
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(root, name+"-dir")
			env := map[string]string{
				executorenv.EnvSourceType:  executorenv.TypeHuggingFace,
				executorenv.EnvSinkType:    executorenv.TypePVC,
				executorenv.EnvSinkPVCPath: dst,
				"HF_ENDPOINT":              hf.URL,
				executorenv.OptionEnv(executorenv.SourceOptionPrefix, "repo"):  "org/m",
				executorenv.OptionEnv(executorenv.SourceOptionPrefix, "files"): name,
			}
			r := runExecutor(t, root, env)
			if r.code != 0 {
				t.Fatalf("the download of an intact %s = exit %d\n%s", name, r.code, r.output)
			}
			if err := os.RemoveAll(dst); err != nil {
				t.Fatal(err)
			}
			hf.CorruptDownloads("models/org/m", name)
			r = runExecutor(t, root, env)
			if r.code != 1 || !strings.Contains(r.progress.Error, "does not match the hash") {
				t.Errorf("the download of a corrupted %s = exit %d, error %q; want a hash mismatch", name, r.code, r.progress.Error)
			}
			if got := readTree(t, dst); len(got) != 0 {
				t.Errorf("files left after the failed download: %v", keys(got))
			}
		})
	}

	hf.SetFile("models/org/dup", "a/b", []byte("one"))
	hf.SetFile("models/org/dup", "a//b", []byte("two"))
	r := runExecutor(t, root, map[string]string{
		executorenv.EnvSourceType:  executorenv.TypeHuggingFace,
		executorenv.EnvSinkType:    executorenv.TypePVC,
		executorenv.EnvSinkPVCPath: filepath.Join(root, "dup"),
		"HF_ENDPOINT":              hf.URL,
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, "repo"): "org/dup",
	})
	if r.code != 1 || !strings.Contains(r.progress.Error, "lead to the same file") {
		t.Errorf("a//b and a/b = exit %d, error %q; want both refused", r.code, r.progress.Error)
	}
}
