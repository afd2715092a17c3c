// Command csi benchmarks the csi-s3 mounters against the raw S3 client on
// one versitygw, side by side in one run: a durable sequential write of a
// large file, a cold sequential read of it, parallel readers of different
// files (a data loader), many small files, listing a large prefix, the
// mount daemon's peak memory during the reads, and Stage+Publish /
// Unpublish+Unstage latency. Each mounter is measured on a read-write
// volume and, for the reads, on a read-only one. It needs root and
// /dev/fuse: without root it prints nothing on standard output and says why
// on standard error. It prints a markdown table.
//
// With rclone among the mounters, streaming rows measure the write tests
// again on read-write volumes whose vfsCacheMode uploads while a file is
// written (off, or minimal): what checkpoint volumes use.
//
// The environment sets the sizes and what runs:
//
//	ACCELSTACK_CSI_BENCH_MIB          the large file, MiB (1024)
//	ACCELSTACK_CSI_BENCH_READERS      parallel readers, one file each (8)
//	ACCELSTACK_CSI_BENCH_READER_MIB   each reader's file, MiB (256)
//	ACCELSTACK_CSI_BENCH_SMALL        4 KiB files created and read (1000)
//	ACCELSTACK_CSI_BENCH_LIST         objects in the listed prefix (10000)
//	ACCELSTACK_CSI_BENCH_MOUNTERS     mounters, comma separated (rclone,s3fs)
//	ACCELSTACK_CSI_BENCH_RCLONE_OPTIONS, ACCELSTACK_CSI_BENCH_S3FS_OPTIONS
//	                                  the volumes' options attribute, to
//	                                  compare mounter options
//	ACCELSTACK_CSI_BENCH_READ_ONLY    "false" skips the read-only rows
//	ACCELSTACK_CSI_BENCH_STREAMING    the vfsCacheMode of each streaming
//	                                  row, comma separated (off,minimal);
//	                                  "false" skips them
//	ACCELSTACK_CSI_BENCH_STREAMING_OPTIONS
//	                                  the streaming volumes' options
//	                                  attribute (none)
//	ACCELSTACK_CSI_BENCH_KEEP         "true" keeps the run's temp dir
//	                                  (versitygw's and the plugin's logs)
//	                                  and prints its path on standard error
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/minio/minio-go/v7"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/accelstack/accelstack/test/harness"
)

// The bucket and its prefixes: the data set every read test reads, the
// listed prefix, and one prefix per mounter for its writes.
const (
	bucket     = "bench"
	dataPrefix = "data"
	listPrefix = "list"
)

// sizes are what the benchmark moves.
type sizes struct {
	bigMiB, readers, readerMiB, small, list int
}

// result is one row of the table.
type result struct {
	name                       string
	writeMBs, readMBs, parMBs  float64
	smallCreate, smallRead     float64
	list                       time.Duration
	daemonPeak                 uint64
	stagePublish, unpublishP50 time.Duration
	load                       string
}

// row is how one row mounts its volumes and what it measures.
type row struct {
	// mounter is the volumes' mounter attribute.
	mounter string
	// readOnly measures only the reads, on volumes with readOnly set.
	readOnly bool
	// cacheMode, when set, is the volumes' vfsCacheMode attribute, and the
	// row measures only the write tests (a streaming row).
	cacheMode string
	// options is the volumes' options attribute.
	options string
}

// name is the row's name in the table.
func (rw row) name() string {
	switch {
	case rw.cacheMode != "" && rw.options != "":
		return fmt.Sprintf("%s streaming (vfsCacheMode %s, %s)", rw.mounter, rw.cacheMode, rw.options)
	case rw.cacheMode != "":
		return fmt.Sprintf("%s streaming (vfsCacheMode %s)", rw.mounter, rw.cacheMode)
	case rw.readOnly:
		return rw.mounter + " read-only"
	}
	return rw.mounter
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench csi:", err)
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

func run() error {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "bench csi: skipped, needs root and /dev/fuse")
		return nil
	}
	sz := sizes{
		bigMiB:    envInt("ACCELSTACK_CSI_BENCH_MIB", 1024),
		readers:   envInt("ACCELSTACK_CSI_BENCH_READERS", 8),
		readerMiB: envInt("ACCELSTACK_CSI_BENCH_READER_MIB", 256),
		small:     envInt("ACCELSTACK_CSI_BENCH_SMALL", 1000),
		list:      envInt("ACCELSTACK_CSI_BENCH_LIST", 10000),
	}
	mounters := []string{"rclone", "s3fs"}
	if s := os.Getenv("ACCELSTACK_CSI_BENCH_MOUNTERS"); s != "" {
		mounters = strings.Split(s, ",")
	}
	withReadOnly := os.Getenv("ACCELSTACK_CSI_BENCH_READ_ONLY") != "false"
	var rows []row
	for _, m := range mounters {
		opts := os.Getenv("ACCELSTACK_CSI_BENCH_" + strings.ToUpper(m) + "_OPTIONS")
		rows = append(rows, row{mounter: m, options: opts})
		if withReadOnly {
			rows = append(rows, row{mounter: m, readOnly: true, options: opts})
		}
	}
	streaming, err := streamingRows(mounters)
	if err != nil {
		return err
	}
	rows = append(rows, streaming...)

	dir, err := os.MkdirTemp("", "csi-bench-")
	if err != nil {
		return err
	}
	if os.Getenv("ACCELSTACK_CSI_BENCH_KEEP") == "true" {
		defer fmt.Fprintln(os.Stderr, "bench csi: kept", dir)
	} else {
		defer os.RemoveAll(dir)
	}
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
	if err := cl.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: srv.Region}); err != nil {
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
		"--rclone=" + rclone, "--systemd=false", "-v=2",
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
	if err := plugin.WaitReady(30*time.Second, func(ctx context.Context) error {
		_, err := csipb.NewIdentityClient(conn).Probe(ctx, &csipb.ProbeRequest{})
		return err
	}); err != nil {
		return err
	}

	data := make([]byte, sz.bigMiB<<20)
	if _, err := rand.Read(data); err != nil {
		return err
	}
	small := make([]byte, 4<<10)
	_, _ = rand.Read(small)
	if err := putListPrefix(ctx, cl, sz.list); err != nil {
		return err
	}
	b := &bench{cl: cl, node: csipb.NewNodeClient(conn), dir: dir, s3Dir: srv.Dir, sz: sz, data: data, small: small,
		secrets: map[string]string{"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "endpoint": srv.Endpoint, "region": srv.Region}}

	loadStart := loadAvg()
	raw, err := b.raw(ctx)
	if err != nil {
		return err
	}
	results := []result{raw}
	for _, rw := range rows {
		r, err := b.measure(ctx, rw)
		if err != nil {
			return fmt.Errorf("%s: %w", rw.name(), err)
		}
		results = append(results, r)
	}
	printTable(sz, results, len(streaming) > 0, loadStart)
	return nil
}

// streamingRows are the streaming rows ACCELSTACK_CSI_BENCH_STREAMING
// asks for, none when rclone is not among the mounters.
func streamingRows(mounters []string) ([]row, error) {
	modes := os.Getenv("ACCELSTACK_CSI_BENCH_STREAMING")
	if modes == "false" || !slices.Contains(mounters, "rclone") {
		return nil, nil
	}
	if modes == "" {
		modes = "off,minimal"
	}
	var rows []row
	for _, mode := range strings.Split(modes, ",") {
		if mode != "off" && mode != "minimal" {
			return nil, fmt.Errorf("ACCELSTACK_CSI_BENCH_STREAMING: %q is not off or minimal, the cache modes that upload while a file is written", mode)
		}
		rows = append(rows, row{mounter: "rclone", cacheMode: mode, options: os.Getenv("ACCELSTACK_CSI_BENCH_STREAMING_OPTIONS")})
	}
	return rows, nil
}

// printTable prints the markdown table, each figure with its ratio to the
// raw client's.
func printTable(sz sizes, rows []result, streaming bool, loadStart string) {
	raw := rows[0]
	fmt.Printf("csi-s3 on one versitygw (posix backend, loopback), page cache of the objects dropped before each read; ratios (in parentheses) against raw minio-go in the same run. "+
		"Write: %d MiB, timed until the object is in S3 with its size (sha256 checked after). Read: the same file, cold. "+
		"Parallel: %d readers of %d MiB files at once, aggregate (raw: %d GETs at once). %d x 4 KiB files. "+
		"ls: the names of a %d-object prefix on a fresh mount (raw: one ListObjects). Peak RSS: the mount daemon's during the reads. ",
		sz.bigMiB, sz.readers, sz.readerMiB, sz.readers, sz.small, sz.list)
	if streaming {
		fmt.Print("Streaming rows: the write tests alone, on read-write volumes with that vfsCacheMode (and options), whose daemon uploads while the file is written and whose close returns once the object is in S3; " +
			"every write test writes whole files front to back, so all work in these modes; their reads are the read-only rows' (cache mode off) and are not repeated; peak RSS is the daemon's during the large write. ")
	}
	fmt.Printf("Load: the 1-minute load average as the row started (%s when the run started).\n\n", loadStart)
	fmt.Println("| path | write MB/s | read MB/s | parallel read MB/s | 4 KiB create/s | 4 KiB read/s | ls | daemon peak RSS | Stage+Publish p50 | Unpublish+Unstage p50 | load |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	ratio := func(v, ref float64) string {
		if v == 0 {
			return ""
		}
		return fmt.Sprintf("%.1f (%.2f)", v, v/ref)
	}
	for _, r := range rows {
		sp, up, mem, ls := "", "", "", ""
		if r.stagePublish > 0 {
			sp, up = r.stagePublish.Round(time.Millisecond).String(), r.unpublishP50.Round(time.Millisecond).String()
		}
		if r.daemonPeak > 0 {
			mem = fmt.Sprintf("%.0f MiB", float64(r.daemonPeak)/(1<<20))
		}
		if r.list > 0 {
			ls = fmt.Sprintf("%s (%.2f)", r.list.Round(time.Millisecond), raw.list.Seconds()/r.list.Seconds())
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name,
			ratio(r.writeMBs, raw.writeMBs), ratio(r.readMBs, raw.readMBs), ratio(r.parMBs, raw.parMBs),
			ratio(r.smallCreate, raw.smallCreate), ratio(r.smallRead, raw.smallRead), ls, mem, sp, up, r.load)
	}
}

// bench holds what every measurement needs.
type bench struct {
	cl          *minio.Client
	node        csipb.NodeClient
	dir, s3Dir  string
	sz          sizes
	data, small []byte
	secrets     map[string]string
}

// mbs is megabytes (10^6) per second.
func mbs(n int, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

// readerKey is the object of parallel reader i.
func readerKey(i int) string { return fmt.Sprintf("%s/reader-%d.bin", dataPrefix, i) }

// raw measures the S3 client alone. Its writes are the data set the
// mounters read: the large file and the readers' files under dataPrefix.
func (b *bench) raw(ctx context.Context) (result, error) {
	r := result{name: "raw minio-go", load: loadAvg()}
	big := dataPrefix + "/big.bin"
	start := time.Now()
	if _, err := b.cl.PutObject(ctx, bucket, big, bytes.NewReader(b.data), int64(len(b.data)), minio.PutObjectOptions{}); err != nil {
		return r, err
	}
	if err := b.waitObject(ctx, big); err != nil {
		return r, err
	}
	r.writeMBs = mbs(len(b.data), time.Since(start))
	if err := b.checkObject(ctx, big); err != nil {
		return r, err
	}

	b.dropCache(big)
	start = time.Now()
	if err := b.get(ctx, big, len(b.data)); err != nil {
		return r, err
	}
	r.readMBs = mbs(len(b.data), time.Since(start))

	part := make([]byte, b.sz.readerMiB<<20)
	var keys []string
	for i := range b.sz.readers {
		if _, err := rand.Read(part); err != nil {
			return r, err
		}
		if _, err := b.cl.PutObject(ctx, bucket, readerKey(i), bytes.NewReader(part), int64(len(part)), minio.PutObjectOptions{}); err != nil {
			return r, err
		}
		keys = append(keys, readerKey(i))
	}
	b.dropCache(keys...)
	start = time.Now()
	if err := parallel(b.sz.readers, func(i int) error { return b.get(ctx, readerKey(i), len(part)) }); err != nil {
		return r, err
	}
	r.parMBs = mbs(b.sz.readers*len(part), time.Since(start))

	start = time.Now()
	for i := range b.sz.small {
		if _, err := b.cl.PutObject(ctx, bucket, fmt.Sprintf("raw/small/%d", i), bytes.NewReader(b.small), int64(len(b.small)), minio.PutObjectOptions{}); err != nil {
			return r, err
		}
	}
	r.smallCreate = float64(b.sz.small) / time.Since(start).Seconds()
	start = time.Now()
	for i := range b.sz.small {
		if err := b.get(ctx, fmt.Sprintf("raw/small/%d", i), len(b.small)); err != nil {
			return r, err
		}
	}
	r.smallRead = float64(b.sz.small) / time.Since(start).Seconds()

	start = time.Now()
	n := 0
	for o := range b.cl.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: listPrefix + "/"}) {
		if o.Err != nil {
			return r, o.Err
		}
		n++
	}
	r.list = time.Since(start)
	if n != b.sz.list {
		return r, fmt.Errorf("listed %d objects under %s, want %d", n, listPrefix, b.sz.list)
	}
	return r, nil
}

// get reads an object whole and checks its length.
func (b *bench) get(ctx context.Context, key string, size int) error {
	o, err := b.cl.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer o.Close()
	n, err := copyDiscard(o)
	if err != nil {
		return fmt.Errorf("reading %s: %w", key, err)
	}
	if n != int64(size) {
		return fmt.Errorf("read %d bytes of %s, want %d", n, key, size)
	}
	return nil
}

// waitObject polls until key is in S3 with the large file's size.
func (b *bench) waitObject(ctx context.Context, key string) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		st, err := b.cl.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
		if err == nil && st.Size == int64(len(b.data)) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not in S3 with %d bytes after 10m (last: %w)", key, len(b.data), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkObject compares the sha256 of key in S3 with the large file's.
func (b *bench) checkObject(ctx context.Context, key string) error {
	o, err := b.cl.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer o.Close()
	h := sha256.New()
	if _, err := io.Copy(h, o); err != nil {
		return err
	}
	if want := sha256.Sum256(b.data); !bytes.Equal(h.Sum(nil), want[:]) {
		return fmt.Errorf("%s in S3 differs from what was written", key)
	}
	return nil
}

// dropCache evicts the objects' files of the posix backend from the page
// cache, so that the next read comes from the disk, as a cold read on a
// real server would.
func (b *bench) dropCache(keys ...string) {
	for _, k := range keys {
		f, err := os.Open(filepath.Join(b.s3Dir, bucket, k))
		if err != nil {
			continue
		}
		_ = f.Sync()
		_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		f.Close()
	}
}

// mount is a staged and published volume.
type mount struct {
	target, staging string
	done            func() error
}

// measure measures one row through published mounts. Every test uses a
// fresh mount so that no cache of the mounter serves it. A read-only row
// measures only the reads, on volumes with readOnly set; a streaming row
// only the writes, on volumes with its vfsCacheMode.
func (b *bench) measure(ctx context.Context, rw row) (result, error) {
	r := result{name: rw.name(), load: loadAvg()}
	var stageTimes, unstageTimes []time.Duration
	seq := 0
	mountOnce := func(prefix string) (mount, error) {
		volCtx := map[string]string{"mounter": rw.mounter, "bucket": bucket, "prefix": prefix}
		if rw.options != "" {
			volCtx["options"] = rw.options
		}
		if rw.cacheMode != "" {
			volCtx["vfsCacheMode"] = rw.cacheMode
		}
		mode := csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
		if rw.readOnly {
			volCtx["readOnly"] = "true"
			mode = csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY
		}
		capability := &csipb.VolumeCapability{
			AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
			AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode},
		}
		seq++
		volID := fmt.Sprintf("bench-%s-%t-%d", rw.mounter, rw.readOnly, seq)
		if rw.cacheMode != "" {
			volID = fmt.Sprintf("bench-%s-streaming-%s-%d", rw.mounter, rw.cacheMode, seq)
		}
		staging, target := filepath.Join(b.dir, volID+"-staging"), filepath.Join(b.dir, volID+"-target")
		start := time.Now()
		if _, err := b.node.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: volID, StagingTargetPath: staging, VolumeContext: volCtx, Secrets: b.secrets, VolumeCapability: capability}); err != nil {
			return mount{}, err
		}
		if _, err := b.node.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: volID, StagingTargetPath: staging, TargetPath: target, VolumeContext: volCtx, VolumeCapability: capability, Readonly: rw.readOnly}); err != nil {
			return mount{}, err
		}
		stageTimes = append(stageTimes, time.Since(start))
		return mount{target: target, staging: staging, done: func() error {
			start := time.Now()
			if _, err := b.node.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: target}); err != nil {
				return err
			}
			if _, err := b.node.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: staging}); err != nil {
				return err
			}
			unstageTimes = append(unstageTimes, time.Since(start))
			return nil
		}}, nil
	}

	// Each row writes under a prefix of its own.
	writePrefix := rw.mounter
	if rw.cacheMode != "" {
		writePrefix += "-streaming-" + rw.cacheMode
	}
	if !rw.readOnly {
		if err := b.mounterWrites(ctx, &r, writePrefix, rw.cacheMode != "", mountOnce); err != nil {
			return r, err
		}
	}
	if rw.cacheMode != "" {
		// Reads of a streaming volume are those of the read-only rows
		// (cache mode off), and its few mounts make no percentile.
		return r, nil
	}

	// Reads of the data set, cold, then the parallel readers, on one fresh
	// mount whose daemon's peak memory is what the reads took.
	mt, err := mountOnce(dataPrefix)
	if err != nil {
		return r, err
	}
	b.dropCache(dataPrefix + "/big.bin")
	start := time.Now()
	if err := readFile(filepath.Join(mt.target, "big.bin"), len(b.data)); err != nil {
		return r, err
	}
	r.readMBs = mbs(len(b.data), time.Since(start))
	var keys []string
	for i := range b.sz.readers {
		keys = append(keys, readerKey(i))
	}
	b.dropCache(keys...)
	start = time.Now()
	if err := parallel(b.sz.readers, func(i int) error {
		return readFile(filepath.Join(mt.target, filepath.Base(readerKey(i))), b.sz.readerMiB<<20)
	}); err != nil {
		return r, err
	}
	r.parMBs = mbs(b.sz.readers*b.sz.readerMiB<<20, time.Since(start))
	if pid := daemonPID(mt.staging); pid > 0 {
		if mem, err := harness.ProcessMemory(pid); err == nil {
			r.daemonPeak = mem.Peak
		}
	}
	if err := mt.done(); err != nil {
		return r, err
	}

	// ls of the large prefix on a fresh mount: the names, as ls prints them.
	mt, err = mountOnce(listPrefix)
	if err != nil {
		return r, err
	}
	start = time.Now()
	entries, err := os.ReadDir(mt.target)
	if err != nil {
		return r, err
	}
	r.list = time.Since(start)
	if len(entries) != b.sz.list {
		return r, fmt.Errorf("ls of %s: %d entries, want %d", listPrefix, len(entries), b.sz.list)
	}
	if err := mt.done(); err != nil {
		return r, err
	}

	for len(stageTimes) < 11 {
		mt, err := mountOnce(writePrefix)
		if err != nil {
			return r, err
		}
		if err := mt.done(); err != nil {
			return r, err
		}
	}
	r.stagePublish, r.unpublishP50 = p50(stageTimes), p50(unstageTimes)
	return r, nil
}

// mounterWrites measures the writes of a read-write volume under prefix:
// the durable large write, then the small files (created until unstage
// returns, so until rclone has uploaded them, and read on a fresh mount).
// With writePeak the daemon's peak memory is taken after the large write.
func (b *bench) mounterWrites(ctx context.Context, r *result, prefix string, writePeak bool, mountOnce func(prefix string) (mount, error)) error {
	mt, err := mountOnce(prefix)
	if err != nil {
		return err
	}
	key := prefix + "/big.bin"
	start := time.Now()
	if err := os.WriteFile(filepath.Join(mt.target, "big.bin"), b.data, 0o644); err != nil {
		return err
	}
	if err := b.waitObject(ctx, key); err != nil {
		return err
	}
	r.writeMBs = mbs(len(b.data), time.Since(start))
	if writePeak {
		if mem, err := harness.ProcessMemory(daemonPID(mt.staging)); err == nil {
			r.daemonPeak = mem.Peak
		}
	}
	if err := b.checkObject(ctx, key); err != nil {
		return err
	}
	if err := mt.done(); err != nil {
		return err
	}

	if mt, err = mountOnce(prefix); err != nil {
		return err
	}
	start = time.Now()
	for i := range b.sz.small {
		if err := os.WriteFile(filepath.Join(mt.target, "small-"+strconv.Itoa(i)), b.small, 0o644); err != nil {
			return err
		}
	}
	if err := mt.done(); err != nil {
		return err
	}
	r.smallCreate = float64(b.sz.small) / time.Since(start).Seconds()

	if mt, err = mountOnce(prefix); err != nil {
		return err
	}
	start = time.Now()
	for i := range b.sz.small {
		if _, err := os.ReadFile(filepath.Join(mt.target, "small-"+strconv.Itoa(i))); err != nil {
			return err
		}
	}
	r.smallRead = float64(b.sz.small) / time.Since(start).Seconds()
	return mt.done()
}

// readFile reads the file at p whole and checks its length.
func readFile(p string, size int) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := copyDiscard(f)
	if err != nil {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	if n != int64(size) {
		return fmt.Errorf("read %d bytes of %s, want %d", n, p, size)
	}
	return nil
}

// copyDiscard reads r to its end in 1 MiB reads, as a data loader or dd
// bs=1M does; io.Copy to io.Discard would read 8 KiB at a time, which costs
// the raw client and a mount's reader CPU that the data path does not.
func copyDiscard(r io.Reader) (int64, error) {
	buf := make([]byte, 1<<20)
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// putListPrefix puts n one-byte objects under listPrefix, 16 at a time.
func putListPrefix(ctx context.Context, cl *minio.Client, n int) error {
	const workers = 16
	return parallel(workers, func(w int) error {
		for i := w; i < n; i += workers {
			if _, err := cl.PutObject(ctx, bucket, fmt.Sprintf("%s/obj-%05d", listPrefix, i), bytes.NewReader([]byte{'x'}), 1, minio.PutObjectOptions{}); err != nil {
				return err
			}
		}
		return nil
	})
}

// parallel runs f(0..n-1) at once and joins their errors.
func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// daemonPID finds the FUSE daemon serving the staging path: the process
// whose command line names it.
func daemonPID(staging string) int {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if slices.Contains(strings.Split(string(b), "\x00"), staging) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return pid
		}
	}
	return 0
}

// loadAvg is the 1-minute load average.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
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
