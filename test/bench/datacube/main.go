// Command datacube benchmarks the DataCube executor against `rclone copy` on
// one versitygw: one large file and many small files, upload (PVC->S3) and
// download (S3->PVC), with the throughput of each, their ratio and the
// executor's peak RSS (VmHWM of the real process).
//
// ACCELSTACK_DATACUBE_BENCH_MIB sets the large file's size (default 2048,
// a run of about four minutes on two cores) and
// ACCELSTACK_DATACUBE_BENCH_FILES the number of 16 KiB files (default
// 10000). Both tools run with 8 parallel transfers and 64 MiB parts.
// It prints a markdown table, which make bench writes into docs/benchmarks.md.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
	"github.com/accelstack/accelstack/test/harness"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench datacube:", err)
		os.Exit(1)
	}
}

// envInt reads a positive integer from the environment.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// measurement is one timed run of a tool.
type measurement struct {
	seconds  float64
	peakKiB  int64
	mbPerSec float64
}

func run() error {
	largeMiB := envInt("ACCELSTACK_DATACUBE_BENCH_MIB", 2048)
	smallFiles := envInt("ACCELSTACK_DATACUBE_BENCH_FILES", 10000)
	const smallSize = 16 << 10

	dir, err := os.MkdirTemp("", "datacube-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	port, err := harness.FreePort()
	if err != nil {
		return err
	}
	srv, s3p, err := harness.LaunchS3(filepath.Join(dir, "s3"), port, filepath.Join(dir, "versitygw.log"))
	if err != nil {
		return err
	}
	defer s3p.Stop()
	cl, err := srv.Client()
	if err != nil {
		return err
	}
	if err := cl.MakeBucket(context.Background(), "bench", minio.MakeBucketOptions{Region: srv.Region}); err != nil {
		return err
	}
	bin, err := harness.BuildCmd("datacube-executor")
	if err != nil {
		return err
	}
	rclone, err := harness.Tool("rclone")
	if err != nil {
		return err
	}

	pvc := filepath.Join(dir, "pvc")
	large := filepath.Join(pvc, "large")
	if err := writeRandom(filepath.Join(large, "model.bin"), int64(largeMiB)<<20); err != nil {
		return err
	}
	small := filepath.Join(pvc, "small")
	for i := range smallFiles {
		p := filepath.Join(small, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%05d", i))
		if err := writeRandom(p, smallSize); err != nil {
			return err
		}
	}

	b := &bench{srv: srv, bin: bin, rclone: rclone, pvc: pvc}
	loadStart := loadAvg()
	var table []string
	cases := []struct {
		name  string
		local string
		bytes int64
	}{
		{fmt.Sprintf("1 file of %d MiB", largeMiB), "large", int64(largeMiB) << 20},
		{fmt.Sprintf("%d files of 16 KiB", smallFiles), "small", int64(smallFiles) * smallSize},
	}
	for _, c := range cases {
		for _, dirn := range []string{"upload", "download"} {
			var ex, rc measurement
			if dirn == "upload" {
				if ex, err = b.executor(c.bytes, pvcEnv("source", filepath.Join(pvc, c.local), "sink", srv, "s3://bench/exec/"+c.local+"/")); err != nil {
					return err
				}
				if rc, err = b.rcloneCopy(c.bytes, filepath.Join(pvc, c.local), "bench:bench/rclone/"+c.local); err != nil {
					return err
				}
			} else {
				if ex, err = b.executor(c.bytes, pvcEnv("sink", filepath.Join(pvc, "down-exec", c.local), "source", srv, "s3://bench/exec/"+c.local+"/")); err != nil {
					return err
				}
				if rc, err = b.rcloneCopy(c.bytes, "bench:bench/exec/"+c.local, filepath.Join(pvc, "down-rclone", c.local)); err != nil {
					return err
				}
			}
			table = append(table, fmt.Sprintf("| %s | %.1f MB/s | %.1f MB/s | %.2f | %.1f MiB |", dirn+" "+c.name, ex.mbPerSec, rc.mbPerSec, ex.mbPerSec/rc.mbPerSec, float64(ex.peakKiB)/1024))
		}
	}
	fmt.Printf("DataCube executor vs rclone copy on one versitygw (posix backend), %d CPUs; the executor's downloads are durable (synced before their rename, and the file system synced before it exits), rclone's are not. 1-minute load average %s at the start, %s at the end.\n\n", cpuCount(), loadStart, loadAvg())
	fmt.Println("| case | executor | rclone | ratio | executor RSS |")
	fmt.Println("|---|---|---|---|---|")
	fmt.Println(strings.Join(table, "\n"))
	return nil
}

// bench holds what every run needs.
type bench struct {
	srv         *harness.S3Server
	bin, rclone string
	pvc         string
}

// pvcEnv is the contract's environment of a transfer between a PVC path
// and an S3 uri; pvcSide is "source" or "sink".
func pvcEnv(pvcSide, pvcPath, s3Side string, srv *harness.S3Server, uri string) []string {
	up := map[string]string{"source": "SOURCE", "sink": "SINK"}
	prefix := map[string]string{"source": executorenv.SourceOptionPrefix, "sink": executorenv.SinkOptionPrefix}[s3Side]
	return []string{
		"DATACUBE_" + up[pvcSide] + "_TYPE=pvc",
		"DATACUBE_" + up[pvcSide] + "_PVC_PATH=" + pvcPath,
		"DATACUBE_" + up[s3Side] + "_TYPE=s3",
		executorenv.OptionEnv(prefix, "s3-endpoint") + "=" + srv.Endpoint,
		executorenv.OptionEnv(prefix, "s3-access-key-id") + "=" + srv.AccessKey,
		executorenv.OptionEnv(prefix, "s3-secret-access-key") + "=" + srv.SecretKey,
		executorenv.OptionEnv(prefix, "s3-uri") + "=" + uri,
		"AWS_REGION=" + srv.Region,
	}
}

// executor runs the executor binary and measures it.
func (b *bench) executor(bytes int64, env []string) (measurement, error) {
	cmd := exec.Command(b.bin, "--pvc-root", b.pvc, "--termination-message-path", "", "--concurrency", "8", "--part-size", "64Mi")
	cmd.Env = append(os.Environ(), env...)
	return timed(cmd, bytes)
}

// rcloneCopy runs rclone copy with the same parallelism.
func (b *bench) rcloneCopy(bytes int64, src, dst string) (measurement, error) {
	cmd := exec.Command(b.rclone, "copy", src, dst,
		"--transfers=8", "--checkers=16", "--s3-upload-concurrency=8", "--s3-chunk-size=64M",
		"--multi-thread-streams=8", "--multi-thread-cutoff=64M", "--s3-no-check-bucket")
	cmd.Env = append(os.Environ(),
		"RCLONE_CONFIG_BENCH_TYPE=s3",
		"RCLONE_CONFIG_BENCH_PROVIDER=Other",
		"RCLONE_CONFIG_BENCH_ENDPOINT="+b.srv.Endpoint,
		"RCLONE_CONFIG_BENCH_ACCESS_KEY_ID="+b.srv.AccessKey,
		"RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY="+b.srv.SecretKey,
		"RCLONE_CONFIG_BENCH_REGION="+b.srv.Region,
		"RCLONE_CONFIG_BENCH_FORCE_PATH_STYLE=true",
	)
	return timed(cmd, bytes)
}

// timed runs cmd, polling its VmHWM, and returns its throughput in MB/s
// (10^6 bytes) and peak RSS.
func timed(cmd *exec.Cmd, bytes int64) (measurement, error) {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return measurement{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			secs := time.Since(start).Seconds()
			if err != nil {
				return measurement{}, fmt.Errorf("%s: %w\n%s", filepath.Base(cmd.Path), err, out.String())
			}
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > peak {
				peak = ru.Maxrss // KiB on Linux; catches a peak between two polls
			}
			return measurement{seconds: secs, peakKiB: peak, mbPerSec: float64(bytes) / 1e6 / secs}, nil
		case <-tick.C:
			if m, err := harness.ProcessMemory(cmd.Process.Pid); err == nil && int64(m.Peak>>10) > peak {
				peak = int64(m.Peak >> 10)
			}
		}
	}
}

// writeRandom writes size random bytes to p.
func writeRandom(p string, size int64) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// loadAvg is the 1-minute load average.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// cpuCount returns the number of CPUs the process may use.
func cpuCount() int { return runtime.NumCPU() }
