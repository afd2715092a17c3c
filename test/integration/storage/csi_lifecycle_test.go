package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/minio/minio-go/v7"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/accelstack/accelstack/test/harness"
)

// killDaemon sends SIGKILL to a FUSE daemon and waits, up to a minute,
// until it is gone or a zombie, so the kernel reports its mount dead.
func killDaemon(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing the FUSE daemon %d: %v", pid, err)
	}
	deadline := time.Now().Add(time.Minute)
	for syscall.Kill(pid, 0) == nil {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); strings.Contains(string(b), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("FUSE daemon %d still runs a minute after SIGKILL", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killDaemonQuiescent kills rclone at a moment its VFS metadata is whole.
// rclone rewrites a file's metadata in place (truncate, then write), so a
// SIGKILL that lands between the two leaves it empty and the restarted
// rclone drops that file: a loss inside rclone that this test is not
// about. The daemon is stopped with SIGSTOP, its metadata read, and
// continued and stopped again until none is half written; then killed.
func killDaemonQuiescent(t *testing.T, pid int, stateDir string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatalf("stopping the FUSE daemon %d: %v", pid, err)
		}
		waitStopped(t, pid)
		if _, torn := readCacheMeta(t, stateDir); torn == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("rclone's cache metadata was half written at every stop for a minute")
		}
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatalf("continuing the FUSE daemon %d: %v", pid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	killDaemon(t, pid)
}

// waitStopped waits until every thread of pid is in the stopped state.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			t.Fatalf("reading the threads of %d: %v", pid, err)
		}
		stopped := 0
		for _, task := range tasks {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/stat")
			if i := bytes.LastIndexByte(b, ')'); i > 0 && len(b) > i+2 && (b[i+2] == 'T' || b[i+2] == 't') {
				stopped++
			}
		}
		if stopped == len(tasks) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d threads of %d stopped after 10s", stopped, len(tasks), pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dirtyCacheFiles counts the files rclone's VFS metadata under stateDir
// marks as written but not uploaded; metadata that does not parse fails
// the test.
func dirtyCacheFiles(t *testing.T, stateDir string) int {
	t.Helper()
	dirty, torn := readCacheMeta(t, stateDir)
	if torn > 0 {
		t.Fatalf("%d of rclone's cache metadata files under %s do not parse", torn, stateDir)
	}
	return dirty
}

// readCacheMeta counts the files rclone's VFS metadata under stateDir
// marks as dirty, and the metadata files that do not parse.
func readCacheMeta(t *testing.T, stateDir string) (dirty, torn int) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(stateDir, "volumes"), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.Contains(p, string(filepath.Separator)+"vfsMeta"+string(filepath.Separator)) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var meta struct{ Dirty bool }
		switch {
		case json.Unmarshal(b, &meta) != nil:
			torn++
		case meta.Dirty:
			dirty++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirty, torn
}

// TestCSIUnstageUploadsAfterDaemonKill writes files through an rclone
// mount and closes them, stops S3 so that their uploads cannot finish,
// and kills rclone with SIGKILL. Unstage brings rclone back and is
// Unavailable until the uploads are done; once S3 is back it succeeds and
// every file is in S3 with its checksum.
func TestCSIUnstageUploadsAfterDaemonKill(t *testing.T) {
	requireMounter(t, "rclone")
	srv := harness.StartRestartableS3(t)
	cl := makeBucket(t, srv.S3Server, "pending")
	c := newCSIClient(t, "--unstage-timeout=3s")
	volCtx := map[string]string{"mounter": "rclone"}
	staging, target := c.mustStagePublish("pending", volCtx, s3envSecrets(srv.S3Server))

	files := map[string][]byte{}
	for i, size := range []int{1 << 20, 256 << 10, 3 << 20, 32 << 20} {
		name := "f" + strconv.Itoa(i) + ".bin"
		files[name] = randomBytes(t, size)
		if err := os.WriteFile(filepath.Join(target, name), files[name], 0o644); err != nil {
			t.Fatalf("writing %s through the mount: %v", name, err)
		}
	}
	srv.Stop(t)
	pid := stateRecord(t, c.drv.StateDir)
	killDaemonQuiescent(t, pid, c.drv.StateDir)
	if n := dirtyCacheFiles(t, c.drv.StateDir); n == 0 {
		t.Fatal("no file was pending upload when rclone was killed; the test proves nothing")
	}

	if _, err := c.node.NodeUnpublishVolume(c.ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: "pending", TargetPath: target}); err != nil {
		t.Fatalf("NodeUnpublishVolume: %v", err)
	}
	unstage := func() error {
		_, err := c.node.NodeUnstageVolume(c.ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: "pending", StagingTargetPath: staging})
		return err
	}
	if err := unstage(); status.Code(err) != codes.Unavailable {
		t.Fatalf("NodeUnstageVolume with files pending and S3 down = %v, want Unavailable", err)
	}
	// The restarted rclone is alive and may be rewriting a file's metadata
	// as it is read: a half-written one still names a file in the cache.
	if dirty, torn := readCacheMeta(t, c.drv.StateDir); dirty+torn == 0 {
		t.Fatal("the cache of the files not uploaded is gone after an Unavailable unstage")
	}
	srv.Start(t)
	deadline := time.Now().Add(5 * time.Minute)
	for tries := 2; ; tries++ {
		err := unstage()
		if err == nil {
			t.Logf("unstaged on try %d", tries)
			break
		}
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("NodeUnstageVolume try %d = %v, want Unavailable or success", tries, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("NodeUnstageVolume still Unavailable after 5 minutes: %v", err)
		}
		time.Sleep(time.Second)
	}
	c.requireNoMounts()
	for name, data := range files {
		if got := objectSHA256(t, cl, "pending", name, int64(len(data))); got != sum(data) {
			t.Errorf("object %s sha256 = %s, want %s", name, got, sum(data))
		}
	}
	if left, err := os.ReadDir(filepath.Join(c.drv.StateDir, "volumes")); err != nil || len(left) != 0 {
		t.Errorf("state after unstage = %v, %v; want none", left, err)
	}
}

// TestCSIPublishAdoptsBindMount leaves a bind mount of the staging mount
// at a target, as a plugin stopped right after mounting it would: publish
// adopts it, and unpublish removes it.
func TestCSIPublishAdoptsBindMount(t *testing.T) {
	for _, m := range csiMounters {
		t.Run(m, func(t *testing.T) {
			requireMounter(t, m)
			srv := harness.StartS3(t)
			makeBucket(t, srv, "adopt")
			c := newCSIClient(t)
			volCtx := map[string]string{"mounter": m}
			staging, err := c.stage("adopt", volCtx, s3envSecrets(srv))
			if err != nil {
				t.Fatal(err)
			}
			target := c.path("target")
			if err := os.MkdirAll(target, 0o750); err != nil {
				t.Fatal(err)
			}
			if err := unix.Mount(staging, target, "", unix.MS_BIND, ""); err != nil {
				t.Fatalf("bind-mounting the staging mount: %v", err)
			}
			publish := func(target string, readOnly bool) error {
				_, err := c.node.NodePublishVolume(c.ctx, &csipb.NodePublishVolumeRequest{
					VolumeId: "adopt", StagingTargetPath: staging, TargetPath: target, VolumeContext: volCtx, Readonly: readOnly,
					VolumeCapability: mountCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER),
				})
				return err
			}
			if err := publish(target, false); err != nil {
				t.Fatalf("NodePublishVolume over an unrecorded bind mount = %v, want success", err)
			}
			if err := publish(target, true); status.Code(err) != codes.AlreadyExists {
				t.Errorf("NodePublishVolume read-only over a writable bind = %v, want AlreadyExists", err)
			}
			other := c.path("target")
			if err := os.MkdirAll(other, 0o750); err != nil {
				t.Fatal(err)
			}
			if err := unix.Mount("tmpfs", other, "tmpfs", 0, ""); err != nil {
				t.Fatal(err)
			}
			if err := publish(other, false); status.Code(err) != codes.AlreadyExists {
				t.Errorf("NodePublishVolume over a tmpfs = %v, want AlreadyExists", err)
			}
			if err := unix.Unmount(other, 0); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(other); err != nil {
				t.Fatal(err)
			}
			c.unpublishUnstage("adopt", staging, target)
		})
	}
}

// TestCSIRestartHealsDeadMounts kills the plugin and then the FUSE daemon
// under a published volume: the restarted plugin remounts the volume and
// its target on its own, with no CSI call.
func TestCSIRestartHealsDeadMounts(t *testing.T) {
	for _, m := range csiMounters {
		t.Run(m, func(t *testing.T) {
			requireMounter(t, m)
			srv := harness.StartS3(t)
			cl := makeBucket(t, srv, "restart-heal")
			payload := randomBytes(t, 1<<20)
			if _, err := cl.PutObject(context.Background(), "restart-heal", "f.bin", bytes.NewReader(payload), int64(len(payload)), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			c := newCSIClient(t)
			staging, target := c.mustStagePublish("restart-heal", map[string]string{"mounter": m}, s3envSecrets(srv))
			pid := stateRecord(t, c.drv.StateDir)
			c.drv.Kill()
			killDaemon(t, pid)
			if _, err := os.ReadFile(filepath.Join(target, "f.bin")); err == nil {
				t.Fatal("reading through a mount whose daemon was killed succeeded")
			}

			c.drv.Restart(t)
			c.connect()
			deadline := time.Now().Add(2 * time.Minute)
			for {
				b, err := os.ReadFile(filepath.Join(target, "f.bin"))
				if err == nil {
					if sum(b) != sum(payload) {
						t.Errorf("sha256 after the restart = %s, want %s", sum(b), sum(payload))
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the restarted plugin did not heal the mount within 2 minutes: %v", err)
				}
				time.Sleep(250 * time.Millisecond)
			}
			if healed := stateRecord(t, c.drv.StateDir); healed == pid {
				t.Errorf("daemon after the restart = %d, the killed one", healed)
			}
			c.unpublishUnstage("restart-heal", staging, target)
		})
	}
}

// TestCSIDaemonMovedNowhereFailsStage gives the cgroup launcher a cgroup
// root where no move can succeed: staging fails and leaves no mount,
// state or daemon behind.
func TestCSIDaemonMovedNowhereFailsStage(t *testing.T) {
	requireMounter(t, "s3fs")
	srv := harness.StartS3(t)
	makeBucket(t, srv, "nowhere")
	// A hierarchy as NewLauncher sees one, whose new cgroups have no
	// cgroup.procs (a plain directory), so every move fails.
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "pids"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "pids", "cgroup.procs"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCSIClient(t, "--daemon-cgroup-root="+root)
	staging, err := c.stage("nowhere", map[string]string{"mounter": "s3fs"}, s3envSecrets(srv))
	if err == nil || !strings.Contains(err.Error(), "cgroup") {
		t.Fatalf("NodeStageVolume with no cgroup to move to = %v, want an error naming the cgroup", err)
	}
	c.requireNoMounts()
	if _, err := os.Stat(staging); !os.IsNotExist(err) {
		t.Errorf("staging path %s after the failed stage: %v", staging, err)
	}
	left, err := os.ReadDir(filepath.Join(c.drv.StateDir, "volumes"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("state left behind: %v", left)
	}
	if pids := processesWith(t, staging); len(pids) != 0 {
		t.Errorf("processes still running with the staging path: %v", pids)
	}
}

// processesWith lists the PIDs whose command line contains s.
func processesWith(t *testing.T, s string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(s)) {
			out = append(out, pid)
		}
	}
	return out
}
