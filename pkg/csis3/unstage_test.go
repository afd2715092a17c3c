package csis3

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/minio/minio-go/v7"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/mount-utils"
)

// nodeFixture is a node service on a FakeMounter and a fake launcher with
// one bucket, "data", staged by stage.
type nodeFixture struct {
	t       *testing.T
	ns      *nodeServer
	fm      *mount.FakeMounter
	fl      *fakeLauncher
	dir     string
	staging string
	secrets map[string]string
}

// newNodeFixture starts a fake S3 with the bucket "data" and a node
// service with cfg's timeouts.
func newNodeFixture(t *testing.T, unstageTimeout time.Duration) *nodeFixture {
	t.Helper()
	srv, cl := startFakeS3(t)
	if err := cl.MakeBucket(context.Background(), "data", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fm := mount.NewFakeMounter(nil)
	fl := &fakeLauncher{fm: fm, killed: map[int]bool{}}
	cfg := DefaultConfig()
	cfg.NodeID, cfg.MountTimeout, cfg.UnstageTimeout = "n1", 5*time.Second, unstageTimeout
	return &nodeFixture{
		t: t, fm: fm, fl: fl, dir: dir, staging: filepath.Join(dir, "staging"),
		ns:      &nodeServer{cfg: cfg, mounter: fm, lazyUnmount: fm.Unmount, launcher: fl, state: stateStore{root: filepath.Join(dir, "state")}, locks: newKeyedMutex()},
		secrets: map[string]string{"accessKeyID": "fake", "secretAccessKey": "fake-secret", "endpoint": srv},
	}
}

// stage stages "data" with rclone and fails the test on error.
func (f *nodeFixture) stage() {
	f.t.Helper()
	_, err := f.ns.NodeStageVolume(context.Background(), &csipb.NodeStageVolumeRequest{
		VolumeId: "data", StagingTargetPath: f.staging, Secrets: f.secrets,
		VolumeContext:    map[string]string{"mounter": MounterRclone},
		VolumeCapability: mountCapability(),
	})
	if err != nil {
		f.t.Fatalf("NodeStageVolume: %v", err)
	}
}

// unstage unstages "data".
func (f *nodeFixture) unstage() error {
	_, err := f.ns.NodeUnstageVolume(context.Background(), &csipb.NodeUnstageVolumeRequest{VolumeId: "data", StagingTargetPath: f.staging})
	return err
}

// daemon is the recorded daemon of "data".
func (f *nodeFixture) daemon() Daemon {
	f.t.Helper()
	rec, err := f.ns.state.get("data")
	if err != nil || rec == nil {
		f.t.Fatalf("record of data = %v, %v", rec, err)
	}
	return rec.Daemon
}

// cacheMeta writes rclone's VFS metadata of one cached file.
func (f *nodeFixture) cacheMeta(name, content string) string {
	f.t.Helper()
	p := filepath.Join(f.ns.state.volumeDir("data"), "cache", "vfsMeta", "s3", "data", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// mountCapability is a multi-node-writer mount capability.
func mountCapability() *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
	}
}

// TestNodeUnstageKeepsPendingUploads kills the daemon while a closed file
// waits in the write-back cache: unstage restarts the daemon and is
// Unavailable, keeping the cache, until the file is uploaded.
func TestNodeUnstageKeepsPendingUploads(t *testing.T) {
	f := newNodeFixture(t, 300*time.Millisecond)
	f.stage()
	meta := f.cacheMeta("f.bin", `{"ModTime":"2026-01-01T00:00:00Z","Dirty":true}`)
	if err := f.fl.Stop(f.daemon(), 0); err != nil { // the daemon dies
		t.Fatal(err)
	}
	logPath := filepath.Join(f.ns.state.volumeDir("data"), daemonLogName)
	if err := os.WriteFile(logPath, []byte("the run that died\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	reg := prometheus.NewRegistry()
	pending, err := newPendingUploads(reg)
	if err != nil {
		t.Fatal(err)
	}
	f.ns.pending = pending
	if err := f.unstage(); status.Code(err) != codes.Unavailable {
		t.Fatalf("unstage with a dead daemon and a pending upload = %v, want Unavailable", err)
	}
	if got := testutil.ToFloat64(pending.WithLabelValues("data")); got != 1 {
		t.Errorf("accelstack_csi_s3_pending_uploads{volume_id=data} = %v while unstaging waits, want 1", got)
	}
	if f.fl.starts != 2 {
		t.Errorf("daemon starts = %d, want 2: unstage must bring the daemon back to upload", f.fl.starts)
	}
	if !f.fl.Alive(f.daemon()) {
		t.Errorf("the recorded daemon %+v is not the live restarted one", f.daemon())
	}
	if _, err := os.Stat(meta); err != nil {
		t.Fatalf("the pending upload's cache entry is gone: %v", err)
	}
	if b, err := os.ReadFile(logPath + ".1"); err != nil || string(b) != "the run that died\n" {
		t.Errorf("log of the earlier run = %q, %v; want it rotated to %s.1", b, err, daemonLogName)
	}

	f.cacheMeta("f.bin", `{"ModTime":"2026-01-01T00:00:00Z","Dirty":false}`) // uploaded
	if err := f.unstage(); err != nil {
		t.Fatalf("unstage once uploaded = %v, want success", err)
	}
	if n := testutil.CollectAndCount(pending); n != 0 {
		t.Errorf("%d pending-upload series after the volume was unstaged, want none", n)
	}
	if _, err := os.Stat(f.ns.state.volumeDir("data")); !os.IsNotExist(err) {
		t.Errorf("state dir after unstage: %v, want removed", err)
	}
}

// TestNodeUnstageFailsClosed makes the upload queue unreadable: unstage
// fails and keeps the cache, with the daemon alive or dead.
func TestNodeUnstageFailsClosed(t *testing.T) {
	for _, dead := range []bool{false, true} {
		t.Run(map[bool]string{false: "live daemon", true: "dead daemon"}[dead], func(t *testing.T) {
			f := newNodeFixture(t, time.Second)
			f.stage()
			// A metadata entry that cannot be read: a link to a directory.
			meta := f.cacheMeta("ok.bin", `{"Dirty":false}`)
			bad := filepath.Join(filepath.Dir(meta), "unreadable.bin")
			if err := os.Symlink(t.TempDir(), bad); err != nil {
				t.Fatal(err)
			}
			if dead {
				if err := f.fl.Stop(f.daemon(), 0); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 {
				err := f.unstage()
				if code := status.Code(err); code == codes.OK {
					t.Fatalf("unstage with an unreadable upload queue succeeded; want an error")
				}
			}
			if _, err := os.Lstat(bad); err != nil {
				t.Errorf("cache entry after a failed unstage: %v, want kept", err)
			}
			if rec, err := f.ns.state.get("data"); err != nil || rec == nil {
				t.Errorf("record after a failed unstage = %v, %v; want kept", rec, err)
			}
		})
	}
}

// TestNodeUnstageStopsStubbornDaemon has a daemon that outlives its
// mount: after UnstageTimeout unstage stops it and succeeds.
func TestNodeUnstageStopsStubbornDaemon(t *testing.T) {
	f := newNodeFixture(t, 300*time.Millisecond)
	f.stage()
	d := f.daemon()
	f.fl.stubborn = true
	if err := f.unstage(); err != nil {
		t.Fatalf("unstage = %v", err)
	}
	if !f.fl.killed[d.PID] {
		t.Errorf("the daemon that outlived its mount was not stopped after --unstage-timeout")
	}
	if rec, _ := f.ns.state.get("data"); rec != nil {
		t.Errorf("record left after unstage: %+v", rec)
	}
}

// TestNodeUnstageHonoursContext cancels the CO's context while the daemon
// still uploads: unstage returns Unavailable at once and keeps everything.
func TestNodeUnstageHonoursContext(t *testing.T) {
	f := newNodeFixture(t, time.Hour)
	f.stage()
	f.cacheMeta("f.bin", `{"Dirty":true}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.ns.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: "data", StagingTargetPath: f.staging})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("unstage with a cancelled context = %v, want Unavailable", err)
	}
	if mounted, _ := f.fm.IsMountPoint(f.staging); !mounted {
		t.Errorf("staging path unmounted while files were pending")
	}
}

// TestNodeStageRestageKeepsCache fails the remount of a dead volume, at
// the server check and at the daemon's start: the record and the cache of
// the earlier stage stay.
func TestNodeStageRestageKeepsCache(t *testing.T) {
	f := newNodeFixture(t, time.Second)
	f.stage()
	meta := f.cacheMeta("f.bin", `{"Dirty":true}`)
	if err := f.fl.Stop(f.daemon(), 0); err != nil {
		t.Fatal(err)
	}
	unreachable := map[string]string{"accessKeyID": "fake", "secretAccessKey": "fake-secret", "endpoint": "http://127.0.0.1:1"}
	for _, tc := range []struct {
		name      string
		secrets   map[string]string
		failStart bool
	}{
		{name: "unreachable server", secrets: unreachable},
		{name: "daemon fails to start", secrets: f.secrets, failStart: true},
	} {
		f.fl.failStart = tc.failStart
		_, err := f.ns.NodeStageVolume(context.Background(), &csipb.NodeStageVolumeRequest{
			VolumeId: "data", StagingTargetPath: f.staging, Secrets: tc.secrets,
			VolumeContext: map[string]string{"mounter": MounterRclone}, VolumeCapability: mountCapability(),
		})
		if err == nil {
			t.Fatalf("%s: restage succeeded", tc.name)
		}
		if _, err := os.Stat(meta); err != nil {
			t.Errorf("%s: cache after a failed restage: %v, want kept", tc.name, err)
		}
		if rec, err := f.ns.state.get("data"); err != nil || rec == nil {
			t.Errorf("%s: record after a failed restage = %v, %v; want kept", tc.name, rec, err)
		}
	}
}
