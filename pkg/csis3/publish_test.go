package csis3

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/mount-utils"
)

// TestNodePublishAdoptsUnrecordedBind finds a bind mount that publishing
// made just before the plugin stopped, before it was recorded: publishing
// again adopts it, and only a real mismatch is AlreadyExists.
func TestNodePublishAdoptsUnrecordedBind(t *testing.T) {
	f := newNodeFixture(t, time.Second)
	f.stage()
	bound, ro, other := filepath.Join(f.dir, "bound"), filepath.Join(f.dir, "bound-ro"), filepath.Join(f.dir, "other")
	for _, m := range []struct {
		path string
		opts []string
	}{{bound, []string{"bind"}}, {ro, []string{"bind", "ro"}}, {other, []string{"bind"}}} {
		if err := os.MkdirAll(m.path, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := f.fm.Mount(f.staging, m.path, "", m.opts); err != nil {
			t.Fatal(err)
		}
	}
	f.ns.mountInfo = func() ([]mount.MountInfo, error) {
		return []mount.MountInfo{
			{ID: 1, Major: 0, Minor: 50, Root: "/", MountPoint: f.staging, MountOptions: []string{"rw", "nosuid"}},
			{ID: 2, Major: 0, Minor: 50, Root: "/", MountPoint: bound, MountOptions: []string{"rw", "relatime"}},
			{ID: 3, Major: 0, Minor: 50, Root: "/", MountPoint: ro, MountOptions: []string{"ro", "relatime"}},
			{ID: 4, Major: 0, Minor: 51, Root: "/", MountPoint: other, MountOptions: []string{"rw"}},
		}, nil
	}
	mountsBefore := len(f.fm.GetLog())
	publish := func(target string, readOnly bool) error {
		_, err := f.ns.NodePublishVolume(context.Background(), &csipb.NodePublishVolumeRequest{
			VolumeId: "data", StagingTargetPath: f.staging, TargetPath: target, VolumeCapability: mountCapability(), Readonly: readOnly,
		})
		return err
	}
	testCases := []struct {
		name     string
		target   string
		readOnly bool
		want     codes.Code
	}{
		{name: "unrecorded bind of the staging mount", target: bound, want: codes.OK},
		{name: "again, now recorded", target: bound, want: codes.OK},
		{name: "recorded writable, asked read-only", target: bound, readOnly: true, want: codes.AlreadyExists},
		{name: "read-only bind asked writable", target: ro, want: codes.AlreadyExists},
		{name: "read-only bind asked read-only", target: ro, readOnly: true, want: codes.OK},
		{name: "another file system", target: other, want: codes.AlreadyExists},
	}
	for _, tc := range testCases {
		if err := publish(tc.target, tc.readOnly); status.Code(err) != tc.want {
			t.Errorf("%s: NodePublishVolume = %v, want %s", tc.name, err, tc.want)
		}
	}
	if n := len(f.fm.GetLog()) - mountsBefore; n != 0 {
		t.Errorf("adopting mounted %d times, want none", n)
	}
	rec, err := f.ns.state.get("data")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := rec.Targets[bound]; !ok || got {
		t.Errorf("record target %s = %t, %t; want adopted writable", bound, got, ok)
	}
	if got, ok := rec.Targets[ro]; !ok || !got {
		t.Errorf("record target %s = %t, %t; want adopted read-only", ro, got, ok)
	}
	if _, ok := rec.Targets[other]; ok {
		t.Errorf("record adopted %s, a mount of another file system", other)
	}
}
