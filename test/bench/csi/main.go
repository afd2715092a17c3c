// Command csi benchmarks the csi-s3 mounters against the raw S3 client on
// one versitygw: sequential write and read of a large file, many small
// files, and Stage+Publish / Unpublish+Unstage latency. It needs root and
// /dev/fuse: without root it prints nothing on standard output and says why
// on standard error. ACCELSTACK_CSI_BENCH_MIB sets the large file's size
// (1024). It prints a markdown table.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/minio/minio-go/v7"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/accelstack/accelstack/test/harness"
)

// result is one row of the table.
type result struct {
	name                       string
	writeMBs, readMBs          float64
	smallCreate, smallRead     float64
	stagePublish, unpublishP50 time.Duration
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench csi:", err)
		os.Exit(1)
	}
}

func run() error {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "bench csi: skipped, needs root and /dev/fuse")
		return nil
	}
	size := 1024
	if n, err := strconv.Atoi(os.Getenv("ACCELSTACK_CSI_BENCH_MIB")); err == nil && n > 0 {
		size = n
	}
	dir, err := os.MkdirTemp("", "csi-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	defer unmountUnder(dir)
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
	ctx := context.Background()
	if err := cl.MakeBucket(ctx, "bench", minio.MakeBucketOptions{Region: srv.Region}); err != nil {
		return err
	}

	bin, err := harness.BuildCmd("csi-s3")
	if err != nil {
		return err
	}
	rclone, err := harness.Tool("rclone")
	if err != nil {
		return err
	}
	sock := filepath.Join(dir, "csi.sock")
	plugin, err := harness.RunProcess("csi-s3", bin, []string{
		"--endpoint=unix://" + sock, "--node-id=bench", "--state-dir=" + filepath.Join(dir, "state"),
		"--rclone=" + rclone, "--systemd=false",
	}, filepath.Join(dir, "csi-s3.log"))
	if err != nil {
		return err
	}
	defer plugin.Stop()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	node := csipb.NewNodeClient(conn)
	if err := plugin.WaitReady(30*time.Second, func(ctx context.Context) error {
		_, err := csipb.NewIdentityClient(conn).Probe(ctx, &csipb.ProbeRequest{})
		return err
	}); err != nil {
		return err
	}

	data := make([]byte, size<<20)
	if _, err := rand.Read(data); err != nil {
		return err
	}
	small := make([]byte, 4<<10)
	_, _ = rand.Read(small)
	const nSmall = 1000

	var rows []result
	raw, err := benchRaw(ctx, cl, data, small, nSmall)
	if err != nil {
		return err
	}
	rows = append(rows, raw)
	secrets := map[string]string{"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "endpoint": srv.Endpoint, "region": srv.Region}
	for _, m := range []string{"rclone", "s3fs"} {
		r, err := benchMounter(ctx, node, dir, m, secrets, data, small, nSmall)
		if err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
		rows = append(rows, r)
	}

	fmt.Printf("csi-s3 on one versitygw (posix backend, loopback), %d MiB file, %d x 4 KiB files; ratios against raw minio-go.\n\n", size, nSmall)
	fmt.Println("| path | write MB/s | ratio | read MB/s | ratio | 4 KiB create/s | 4 KiB read/s | Stage+Publish p50 | Unpublish+Unstage p50 |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		sp, up := "", ""
		if r.stagePublish > 0 {
			sp, up = r.stagePublish.Round(time.Millisecond).String(), r.unpublishP50.Round(time.Millisecond).String()
		}
		fmt.Printf("| %s | %.1f | %.2f | %.1f | %.2f | %.0f (%.2f) | %.0f (%.2f) | %s | %s |\n", r.name,
			r.writeMBs, r.writeMBs/raw.writeMBs, r.readMBs, r.readMBs/raw.readMBs,
			r.smallCreate, r.smallCreate/raw.smallCreate, r.smallRead, r.smallRead/raw.smallRead, sp, up)
	}
	return nil
}

// mbs is megabytes (10^6) per second.
func mbs(n int, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

// benchRaw measures the S3 client alone.
func benchRaw(ctx context.Context, cl *minio.Client, data, small []byte, n int) (result, error) {
	r := result{name: "raw minio-go"}
	start := time.Now()
	if _, err := cl.PutObject(ctx, "bench", "raw/big.bin", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		return r, err
	}
	r.writeMBs = mbs(len(data), time.Since(start))
	start = time.Now()
	obj, err := cl.GetObject(ctx, "bench", "raw/big.bin", minio.GetObjectOptions{})
	if err != nil {
		return r, err
	}
	if _, err := io.Copy(io.Discard, obj); err != nil {
		return r, err
	}
	obj.Close()
	r.readMBs = mbs(len(data), time.Since(start))
	start = time.Now()
	for i := range n {
		if _, err := cl.PutObject(ctx, "bench", fmt.Sprintf("raw/small/%d", i), bytes.NewReader(small), int64(len(small)), minio.PutObjectOptions{}); err != nil {
			return r, err
		}
	}
	r.smallCreate = float64(n) / time.Since(start).Seconds()
	start = time.Now()
	for i := range n {
		o, err := cl.GetObject(ctx, "bench", fmt.Sprintf("raw/small/%d", i), minio.GetObjectOptions{})
		if err != nil {
			return r, err
		}
		if _, err := io.Copy(io.Discard, o); err != nil {
			return r, err
		}
		o.Close()
	}
	r.smallRead = float64(n) / time.Since(start).Seconds()
	return r, nil
}

// benchMounter measures one mounter through a published mount. Writes
// count until close (and, for mounters that upload after close, until
// the object is complete in S3). Reads go through a fresh mount so no
// cache serves them.
func benchMounter(ctx context.Context, node csipb.NodeClient, dir, m string, secrets map[string]string, data, small []byte, n int) (result, error) {
	r := result{name: m}
	volCtx := map[string]string{"mounter": m, "bucket": "bench", "prefix": m}
	cap := &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
	}
	var stageTimes, unstageTimes []time.Duration
	mountOnce := func(i int) (target string, done func() error, err error) {
		volID := fmt.Sprintf("bench-%s-%d", m, i)
		staging, target := filepath.Join(dir, volID+"-staging"), filepath.Join(dir, volID+"-target")
		start := time.Now()
		if _, err := node.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: volID, StagingTargetPath: staging, VolumeContext: volCtx, Secrets: secrets, VolumeCapability: cap}); err != nil {
			return "", nil, err
		}
		if _, err := node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: volID, StagingTargetPath: staging, TargetPath: target, VolumeContext: volCtx, VolumeCapability: cap}); err != nil {
			return "", nil, err
		}
		stageTimes = append(stageTimes, time.Since(start))
		return target, func() error {
			start := time.Now()
			if _, err := node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: target}); err != nil {
				return err
			}
			if _, err := node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: staging}); err != nil {
				return err
			}
			unstageTimes = append(unstageTimes, time.Since(start))
			return nil
		}, nil
	}

	// Large write; unstaging waits for the daemon to exit, which for
	// rclone means its upload finished.
	target, done, err := mountOnce(0)
	if err != nil {
		return r, err
	}
	start := time.Now()
	if err := os.WriteFile(filepath.Join(target, "big.bin"), data, 0o644); err != nil {
		return r, err
	}
	if err := done(); err != nil {
		return r, err
	}
	r.writeMBs = mbs(len(data), time.Since(start))

	target, done, err = mountOnce(1)
	if err != nil {
		return r, err
	}
	start = time.Now()
	f, err := os.Open(filepath.Join(target, "big.bin"))
	if err != nil {
		return r, err
	}
	if _, err := io.Copy(io.Discard, f); err != nil {
		return r, err
	}
	f.Close()
	r.readMBs = mbs(len(data), time.Since(start))
	start = time.Now()
	for i := range n {
		if err := os.WriteFile(filepath.Join(target, "small-"+strconv.Itoa(i)), small, 0o644); err != nil {
			return r, err
		}
	}
	if err := done(); err != nil {
		return r, err
	}
	r.smallCreate = float64(n) / time.Since(start).Seconds()

	target, done, err = mountOnce(2)
	if err != nil {
		return r, err
	}
	start = time.Now()
	for i := range n {
		if _, err := os.ReadFile(filepath.Join(target, "small-"+strconv.Itoa(i))); err != nil {
			return r, err
		}
	}
	r.smallRead = float64(n) / time.Since(start).Seconds()
	if err := done(); err != nil {
		return r, err
	}
	for i := 3; i < 12; i++ {
		_, done, err := mountOnce(i)
		if err != nil {
			return r, err
		}
		if err := done(); err != nil {
			return r, err
		}
	}
	r.stagePublish, r.unpublishP50 = p50(stageTimes), p50(unstageTimes)
	return r, nil
}

// unmountUnder lazily unmounts whatever a failed run left under dir.
func unmountUnder(dir string) {
	mps, _ := harness.Mounts(dir)
	for i := len(mps) - 1; i >= 0; i-- {
		_ = unix.Unmount(mps[i], unix.MNT_DETACH)
	}
}

// p50 is the median.
func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
