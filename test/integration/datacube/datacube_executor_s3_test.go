package datacube

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/accelstack/accelstack/pkg/datacube/executor"
	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
	"github.com/accelstack/accelstack/test/harness"
)

// s3Tree is the tree the S3 tests move: one file of three 5 MiB parts and
// small files in nested directories, one empty.
var s3Tree = map[string]int{
	"big.bin":          12<<20 + 12345,
	"a.txt":            1000,
	"dir/b.txt":        70 << 10,
	"dir/sub/c.json":   3,
	"dir/sub/empty":    0,
	"other/d.bin":      200 << 10,
	"other/deep/x/y/z": 17,
}

// TestDataCubeExecutorS3 drives the executor binary through the environment
// contract against a real versitygw: upload PVC->S3 with multipart, a rerun
// that skips everything, download S3->PVC, a single-object s3-uri, and sync
// deleting both a removed object's file and an extra local file.
func TestDataCubeExecutorS3(t *testing.T) {
	s3 := harness.StartS3(t)
	root := t.TempDir()
	src := filepath.Join(root, "up", "data")
	writeTree(t, src, s3Tree)
	args := []string{"--part-size", "5Mi", "--concurrency", "4"}
	var total int64
	for _, n := range s3Tree {
		total += int64(n)
	}

	upload := merge(map[string]string{
		executorenv.EnvSourceType:    executorenv.TypePVC,
		executorenv.EnvSourcePVCPath: src,
		executorenv.EnvSinkType:      executorenv.TypeS3,
	}, s3Env(executorenv.SinkOptionPrefix, s3, "s3://datacube/models/v1/"))
	r := runExecutor(t, root, upload, args...)
	if r.code != 0 || r.progress.Files != int64(len(s3Tree)) || r.progress.Bytes != total || r.progress.Error != "" {
		t.Fatalf("upload = exit %d, %+v; want exit 0, %d files, %d bytes\n%s", r.code, r.progress, len(s3Tree), total, r.output)
	}
	r = runExecutor(t, root, upload, args...)
	if r.code != 0 || r.progress.Files != 0 || r.progress.Skipped != int64(len(s3Tree)) {
		t.Fatalf("second upload = exit %d, %+v; want everything skipped\n%s", r.code, r.progress, r.output)
	}

	dst := filepath.Join(root, "down", "data")
	download := merge(map[string]string{
		executorenv.EnvSourceType:  executorenv.TypeS3,
		executorenv.EnvSinkType:    executorenv.TypePVC,
		executorenv.EnvSinkPVCPath: dst,
	}, s3Env(executorenv.SourceOptionPrefix, s3, "s3://datacube/models/v1"))
	r = runExecutor(t, root, download, args...)
	if r.code != 0 || r.progress.Files != int64(len(s3Tree)) || r.progress.Bytes != total {
		t.Fatalf("download = exit %d, %+v\n%s", r.code, r.progress, r.output)
	}
	sameTrees(t, readTree(t, src), readTree(t, dst))
	r = runExecutor(t, root, download, args...)
	if r.code != 0 || r.progress.Files != 0 || r.progress.Skipped != int64(len(s3Tree)) {
		t.Fatalf("second download = exit %d, %+v; want everything skipped\n%s", r.code, r.progress, r.output)
	}

	single := merge(download, map[string]string{
		executorenv.EnvSinkPVCPath:                                      filepath.Join(root, "single"),
		executorenv.OptionEnv(executorenv.SourceOptionPrefix, "s3-uri"): "s3://datacube/models/v1/dir/b.txt",
	})
	r = runExecutor(t, root, single, args...)
	if r.code != 0 || r.progress.Files != 1 {
		t.Fatalf("single-object download = exit %d, %+v\n%s", r.code, r.progress, r.output)
	}
	sameTrees(t, map[string][]byte{"b.txt": readTree(t, src)["dir/b.txt"]}, readTree(t, filepath.Join(root, "single")))

	// Sync: an object removed on S3 and an extra local file both go.
	cl, err := s3.Client()
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.RemoveObject(context.Background(), "datacube", "models/v1/dir/b.txt", minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	writeTree(t, dst, map[string]int{"extra/local.txt": 10})
	r = runExecutor(t, root, download, args...) // without sync: nothing deleted
	if r.code != 0 || r.progress.Deleted != 0 {
		t.Fatalf("download without sync = exit %d, %+v; want nothing deleted\n%s", r.code, r.progress, r.output)
	}
	r = runExecutor(t, root, merge(download, map[string]string{executorenv.EnvSync: "true"}), args...)
	if r.code != 0 || r.progress.Deleted != 2 {
		t.Fatalf("sync download = exit %d, %+v; want 2 deleted\n%s", r.code, r.progress, r.output)
	}
	want := readTree(t, src)
	delete(want, "dir/b.txt")
	sameTrees(t, want, readTree(t, dst))

	// Sync upload: a removed local file's object goes.
	if err := os.Remove(filepath.Join(src, "a.txt")); err != nil {
		t.Fatal(err)
	}
	r = runExecutor(t, root, merge(upload, map[string]string{executorenv.EnvSync: "true"}), args...)
	if r.code != 0 || r.progress.Deleted != 1 {
		t.Fatalf("sync upload = exit %d, %+v; want 1 deleted\n%s", r.code, r.progress, r.output)
	}
	if _, err := cl.StatObject(context.Background(), "datacube", "models/v1/a.txt", minio.StatObjectOptions{}); err == nil {
		t.Error("models/v1/a.txt still exists after a sync upload without it")
	}
}

// stallProxy forwards to an S3 endpoint; the stallAt-th object GET gets its
// headers and half of its body, then hangs until the client goes away.
type stallProxy struct {
	target  *url.URL
	stallAt int

	mu      sync.Mutex
	gets    int
	stalled chan struct{}
}

func (p *stallProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	isObjectGet := r.Method == http.MethodGet && strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 1
	stall := false
	if isObjectGet {
		p.mu.Lock()
		p.gets++
		stall = p.gets == p.stallAt
		p.mu.Unlock()
	}
	if !stall {
		httputil.NewSingleHostReverseProxy(p.target).ServeHTTP(w, r)
		return
	}
	out := r.Clone(r.Context())
	out.URL.Scheme, out.URL.Host, out.RequestURI = p.target.Scheme, p.target.Host, ""
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body[:len(body)/2])
	w.(http.Flusher).Flush()
	close(p.stalled)
	<-r.Context().Done()
}

// TestDataCubeExecutorS3ResumeAfterKill kills an attempt in the middle of a
// file (the proxy stalls it half-way) and checks that no file is under its
// final name unless complete, then that a second attempt skips the files the
// first one finished and made durable and completes the tree. Files are
// made durable and renamed in batches, so the five files before the stall
// may still wait under their temporary names.
func TestDataCubeExecutorS3ResumeAfterKill(t *testing.T) {
	s3 := harness.StartS3(t)
	cl, err := s3.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := cl.MakeBucket(ctx, "resume", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for i := range 12 {
		b := bytes.Repeat([]byte{byte('a' + i)}, 100<<10+i)
		key := "f" + strconv.Itoa(i)
		want[key] = b
		if _, err := cl.PutObject(ctx, "resume", "set/"+key, bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	target, _ := url.Parse(s3.Endpoint)
	proxy := &stallProxy{target: target, stallAt: 6, stalled: make(chan struct{})}
	srv := httptest.NewServer(proxy)
	defer srv.Close()

	root := t.TempDir()
	dst := filepath.Join(root, "data")
	env := merge(map[string]string{
		executorenv.EnvSourceType:  executorenv.TypeS3,
		executorenv.EnvSinkType:    executorenv.TypePVC,
		executorenv.EnvSinkPVCPath: dst,
	}, s3Env(executorenv.SourceOptionPrefix, s3, "s3://resume/set/"))
	bin, err := harness.BuildCmd("datacube-executor")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--pvc-root", root, "--termination-message-path", "", "--concurrency", "1")
	cmd.Env = executorEnv(t, merge(env, map[string]string{executorenv.OptionEnv(executorenv.SourceOptionPrefix, "s3-endpoint"): srv.URL}))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-proxy.stalled:
	case err := <-exited:
		t.Fatalf("the executor ended (%v) before the stalled download:\n%s", err, out.String())
	case <-time.After(5 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("the proxy never stalled a download:\n%s", out.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited

	got := readTree(t, dst)
	complete, partial := 0, 0
	for name, b := range got {
		if strings.HasPrefix(name, ".datacube-partial.") {
			partial++
			continue
		}
		complete++
		if !bytes.Equal(b, want[name]) {
			t.Errorf("after the kill, %s is under its final name with %d bytes, want the complete %d", name, len(b), len(want[name]))
		}
	}
	if complete+partial != 6 || partial < 1 {
		t.Fatalf("after the kill: %d complete and %d partial files, want 6 files of which the stalled one partial: %v", complete, partial, keys(got))
	}

	r := runExecutor(t, root, env, "--concurrency", "1")
	if r.code != 0 || r.progress.Skipped != int64(complete) || r.progress.Files != int64(12-complete) {
		t.Fatalf("second attempt = exit %d, %+v; want %d skipped and %d downloaded\n%s", r.code, r.progress, complete, 12-complete, r.output)
	}
	sameTrees(t, want, readTree(t, dst))
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestDataCubeExecutorS3Failures checks the failures a user meets: bad
// credentials, an unreachable endpoint and paths that leave the PVC, each a
// non-zero exit with a clear message and no secret anywhere in the output.
func TestDataCubeExecutorS3Failures(t *testing.T) {
	s3 := harness.StartS3(t)
	root := t.TempDir()
	writeTree(t, filepath.Join(root, "data"), map[string]int{"a": 10})
	port := refusingPort(t)
	const badSecret = "not-the-secret-Zq9"
	upload := map[string]string{
		executorenv.EnvSourceType:    executorenv.TypePVC,
		executorenv.EnvSourcePVCPath: filepath.Join(root, "data"),
		executorenv.EnvSinkType:      executorenv.TypeS3,
	}
	testCases := []struct {
		name    string
		env     map[string]string
		wantMsg string
	}{
		{
			name: "bad credentials",
			env: merge(upload, s3Env(executorenv.SinkOptionPrefix, s3, "s3://bkt/x/"), map[string]string{
				executorenv.OptionEnv(executorenv.SinkOptionPrefix, "s3-secret-access-key"): badSecret,
			}),
			wantMsg: "S3 refused the credentials",
		},
		{
			name: "unreachable endpoint",
			env: merge(upload, s3Env(executorenv.SinkOptionPrefix, s3, "s3://bkt/x/"), map[string]string{
				executorenv.OptionEnv(executorenv.SinkOptionPrefix, "s3-endpoint"):          "http://127.0.0.1:" + strconv.Itoa(port),
				executorenv.OptionEnv(executorenv.SinkOptionPrefix, "s3-secret-access-key"): badSecret,
			}),
			wantMsg: "is unreachable",
		},
		{
			name: "PVC path with ..",
			env: merge(upload, s3Env(executorenv.SinkOptionPrefix, s3, "s3://bkt/x/"), map[string]string{
				executorenv.EnvSourcePVCPath: root + "/data/../../etc",
			}),
			wantMsg: "unsafe path",
		},
		{
			name: "PVC path outside the root",
			env: merge(upload, s3Env(executorenv.SinkOptionPrefix, s3, "s3://bkt/x/"), map[string]string{
				executorenv.EnvSourcePVCPath: "/etc",
			}),
			wantMsg: "must lie in",
		},
		{
			name: "s3-uri with ..",
			env: merge(map[string]string{
				executorenv.EnvSourceType:  executorenv.TypeS3,
				executorenv.EnvSinkType:    executorenv.TypePVC,
				executorenv.EnvSinkPVCPath: filepath.Join(root, "down"),
			}, s3Env(executorenv.SourceOptionPrefix, s3, "s3://bkt/x/../../y")),
			wantMsg: "unsafe path",
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			r := runExecutor(t, root, tc.env, "--connect-timeout", "5s")
			if r.code != 1 || !strings.Contains(r.progress.Error, tc.wantMsg) || !strings.Contains(r.output, tc.wantMsg) {
				t.Errorf("exit %d, progress error %q; want exit 1 and %q\n%s", r.code, r.progress.Error, tc.wantMsg, r.output)
			}
			for _, secret := range []string{badSecret, s3.SecretKey} {
				if strings.Contains(r.output, secret) || strings.Contains(r.progress.Error, secret) {
					t.Errorf("the output or the progress holds a secret:\n%s\n%s", r.output, r.progress.Error)
				}
			}
		})
	}
}

// TestDataCubeExecutorS3KeyTraversal serves an object whose key leaves the
// PVC (gofakes3 stores any key) and checks the download is refused before
// anything is written.
func TestDataCubeExecutorS3KeyTraversal(t *testing.T) {
	s3 := harness.StartFakeS3(t)
	cl, err := s3.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := cl.MakeBucket(ctx, "evil", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"set/ok.txt", "set/../../../outside.txt"} {
		if _, err := cl.PutObject(ctx, "evil", key, strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatalf("putting %s: %v", key, err)
		}
	}
	root := t.TempDir()
	dst := filepath.Join(root, "pvc", "data")
	cfg := executor.Config{PVCRoot: filepath.Join(root, "pvc"), PartSize: 5 << 20, Concurrency: 2}
	getenv := func(k string) string {
		return merge(map[string]string{
			executorenv.EnvSourceType:  executorenv.TypeS3,
			executorenv.EnvSinkType:    executorenv.TypePVC,
			executorenv.EnvSinkPVCPath: dst,
		}, s3Env(executorenv.SourceOptionPrefix, s3, "s3://evil/set/"))[k]
	}
	if err := cfg.FromEnv(getenv); err != nil {
		t.Fatal(err)
	}
	p, err := executor.Run(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "unsafe path") || p.Files != 0 {
		t.Fatalf("Run = %+v, %v; want an unsafe path error and no file", p, err)
	}
	if got := readTree(t, root); len(got) != 0 {
		t.Errorf("files were written: %v", keys(got))
	}
}

// refusingPort returns a loopback TCP port that refuses connections for the
// whole test: a socket is bound to it but never listens, so no other process
// can take the port meanwhile.
func refusingPort(t *testing.T) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return sa.(*syscall.SockaddrInet4).Port
}

// TestDataCubeExecutorS3SyncEmptySource checks that sync refuses a source
// with no file, which would delete the whole destination: a download from
// an s3-uri that names nothing (a typo) and an upload from an empty PVC
// directory both fail and delete nothing, until --sync-allow-empty (or
// $DATACUBE_SYNC_ALLOW_EMPTY) allows it.
func TestDataCubeExecutorS3SyncEmptySource(t *testing.T) {
	s3 := harness.StartFakeS3(t)
	cl, err := s3.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := cl.MakeBucket(ctx, "sync", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"kept/a.txt", "kept/sub/b.txt"} {
		if _, err := cl.PutObject(ctx, "sync", key, strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	dst := filepath.Join(root, "down")
	writeTree(t, dst, map[string]int{"local1": 10, "dir/local2": 20})
	download := merge(map[string]string{
		executorenv.EnvSourceType:  executorenv.TypeS3,
		executorenv.EnvSinkType:    executorenv.TypePVC,
		executorenv.EnvSinkPVCPath: dst,
		executorenv.EnvSync:        "true",
	}, s3Env(executorenv.SourceOptionPrefix, s3, "s3://sync/kep"))
	r := runExecutor(t, root, download)
	if r.code != 1 || !strings.Contains(r.progress.Error, "the source holds no file") || r.progress.Deleted != 0 {
		t.Errorf("sync download from a missing key = exit %d, %+v; want a refusal\n%s", r.code, r.progress, r.output)
	}
	if got := readTree(t, dst); len(got) != 2 {
		t.Errorf("after the refused sync the destination holds %v, want its 2 files", keys(got))
	}
	r = runExecutor(t, root, download, "--sync-allow-empty")
	if r.code != 0 || r.progress.Deleted != 2 {
		t.Errorf("sync download from an empty source with --sync-allow-empty = exit %d, %+v; want 2 deleted\n%s", r.code, r.progress, r.output)
	}

	src := filepath.Join(root, "empty")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	upload := merge(map[string]string{
		executorenv.EnvSourceType:    executorenv.TypePVC,
		executorenv.EnvSourcePVCPath: src,
		executorenv.EnvSinkType:      executorenv.TypeS3,
		executorenv.EnvSync:          "true",
	}, s3Env(executorenv.SinkOptionPrefix, s3, "s3://sync/kept/"))
	r = runExecutor(t, root, upload)
	if r.code != 1 || !strings.Contains(r.progress.Error, "the source holds no file") || r.progress.Deleted != 0 {
		t.Errorf("sync upload from an empty directory = exit %d, %+v; want a refusal\n%s", r.code, r.progress, r.output)
	}
	for _, key := range []string{"kept/a.txt", "kept/sub/b.txt"} {
		if _, err := cl.StatObject(ctx, "sync", key, minio.StatObjectOptions{}); err != nil {
			t.Errorf("%s is gone after the refused sync: %v", key, err)
		}
	}
	r = runExecutor(t, root, merge(upload, map[string]string{"DATACUBE_SYNC_ALLOW_EMPTY": "true"}))
	if r.code != 0 || r.progress.Deleted != 2 {
		t.Errorf("sync upload from an empty directory with $DATACUBE_SYNC_ALLOW_EMPTY = exit %d, %+v; want 2 deleted\n%s", r.code, r.progress, r.output)
	}
}
