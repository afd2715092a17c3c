package csis3

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"

	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7/pkg/credentials"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/mount-utils"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// fakeLauncher "mounts" by adding the command's mount point to a
// FakeMounter; a daemon is alive while it is not killed and its mount
// point is listed.
type fakeLauncher struct {
	mu     sync.Mutex
	fm     *mount.FakeMounter
	next   int
	killed map[int]bool
	starts int
	path   string
	// stubborn daemons stay alive after their mount is gone.
	stubborn bool
	// failStart makes Start fail.
	failStart bool
}

func (l *fakeLauncher) Start(_ string, cmd Command, _, _ string) (Daemon, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failStart {
		return Daemon{}, errors.New("start refused")
	}
	l.next++
	l.starts++
	l.path = cmd.Args[2]
	l.fm.MountPoints = append(l.fm.MountPoints, mount.MountPoint{Device: "rclone", Path: cmd.Args[2], Type: "fuse.rclone"})
	return Daemon{PID: l.next}, nil
}

func (l *fakeLauncher) Alive(d Daemon) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	mounted, _ := l.fm.IsMountPoint(l.path)
	return !l.killed[d.PID] && d.PID > 0 && (mounted || l.stubborn)
}

func (l *fakeLauncher) Stop(d Daemon, _ time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.killed[d.PID] = true
	return nil
}

// TestNodeServerLifecycle drives the node service against a FakeMounter:
// stage, publish (read-only and not), idempotency, healing, unpublish and
// unstage, and what failed calls leave behind.
func TestNodeServerLifecycle(t *testing.T) {
	f := newNodeFixture(t, DefaultConfig().UnstageTimeout)
	ns, fm, fl, dir, secrets := f.ns, f.fm, f.fl, f.dir, f.secrets
	ctx := context.Background()
	capRW := &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
	}
	staging := filepath.Join(dir, "staging")
	stage := func(secrets map[string]string) error {
		_, err := ns.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: "data", StagingTargetPath: staging, VolumeCapability: capRW, Secrets: secrets})
		return err
	}
	publish := func(target string, ro bool) error {
		_, err := ns.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: "data", StagingTargetPath: staging, TargetPath: target, VolumeCapability: capRW, Readonly: ro})
		return err
	}
	wantCode := func(what string, err error, code codes.Code) {
		t.Helper()
		if status.Code(err) != code {
			t.Fatalf("%s = %v, want %s", what, err, code)
		}
	}

	wantCode("stage without secrets", stage(nil), codes.InvalidArgument)
	wantCode("publish before stage", publish(filepath.Join(dir, "t0"), false), codes.FailedPrecondition)
	if _, err := os.Stat(staging); !os.IsNotExist(err) {
		t.Errorf("failed stage left the staging path: %v", err)
	}
	wantCode("stage", stage(secrets), codes.OK)
	wantCode("stage again", stage(secrets), codes.OK)
	if fl.starts != 1 {
		t.Errorf("daemon starts after two stages = %d, want 1", fl.starts)
	}

	t1, t2 := filepath.Join(dir, "t1"), filepath.Join(dir, "t2")
	wantCode("publish read-only", publish(t1, true), codes.OK)
	wantCode("publish read-only again", publish(t1, true), codes.OK)
	wantCode("publish the same target writable", publish(t1, false), codes.AlreadyExists)

	fl.Stop(Daemon{PID: 1}, 0) // the daemon dies
	wantCode("publish after the daemon died", publish(t2, false), codes.OK)
	if fl.starts != 2 {
		t.Errorf("daemon starts after healing = %d, want 2", fl.starts)
	}

	var mounts []string
	for _, a := range fm.GetLog() {
		if a.Action == mount.FakeActionMount {
			mounts = append(mounts, a.Target+" "+a.FSType)
		}
	}
	wantMounts := []string{t1 + " ", t2 + " "} // bind mounts; the fake daemons mount directly
	if diff := cmp.Diff(wantMounts, mounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}

	for _, target := range []string{t1, t2, t2} {
		_, err := ns.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: "data", TargetPath: target})
		wantCode("unpublish "+target, err, codes.OK)
		if _, err := os.Stat(target); !os.IsNotExist(err) {
			t.Errorf("target %s left after unpublish: %v", target, err)
		}
	}
	for range 2 {
		_, err := ns.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: "data", StagingTargetPath: staging})
		wantCode("unstage", err, codes.OK)
	}
	if len(fm.MountPoints) != 0 {
		t.Errorf("mounts left: %v", fm.MountPoints)
	}
	if _, err := os.Stat(staging); !os.IsNotExist(err) {
		t.Errorf("staging path the driver created is left: %v", err)
	}
	if rec, _ := ns.state.get("data"); rec != nil {
		t.Errorf("state left after unstage: %+v", rec)
	}
}

// startFakeS3 serves gofakes3 in process and returns its URL and a client.
func startFakeS3(t *testing.T) (string, *minio.Client) {
	t.Helper()
	faker := gofakes3.New(s3mem.New())
	hs := httptest.NewServer(faker.Server())
	t.Cleanup(hs.Close)
	cl, err := minio.New(strings.TrimPrefix(hs.URL, "http://"), &minio.Options{Creds: credentials.NewStaticV4("fake", "fake-secret", ""), Region: s3volume.DefaultRegion, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	return hs.URL, cl
}
