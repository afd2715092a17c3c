package csis3

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

// TestStageLogsEffectiveOptions checks that staging logs the mounter's
// whole command line (defaults, the volume's options and its attributes)
// and no credential.
func TestStageLogsEffectiveOptions(t *testing.T) {
	f := newNodeFixture(t, DefaultConfig().UnstageTimeout)
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx := klog.NewContext(context.Background(), logger)
	capability := &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY},
	}
	_, err := f.ns.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{
		VolumeId: "data", StagingTargetPath: filepath.Join(f.dir, "staging"), VolumeCapability: capability, Secrets: f.secrets,
		VolumeContext: map[string]string{"readOnly": "true", "options": "--vfs-read-chunk-streams=4"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	var line string
	for _, l := range strings.Split(got, "\n") {
		if strings.Contains(l, "Mounting volume") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no \"Mounting volume\" line in the log:\n%s", got)
	}
	for _, want := range []string{`mounter="rclone"`, `"mount2"`, `"--vfs-cache-mode","off"`, `"--vfs-write-back","1s"`, `"--read-only"`, `"--vfs-read-chunk-streams=4"`} {
		if !strings.Contains(line, want) {
			t.Errorf("the stage log line lacks %q:\n%s", want, line)
		}
	}
	for _, secret := range []string{f.secrets["accessKeyID"], f.secrets["secretAccessKey"]} {
		if strings.Contains(got, secret) {
			t.Errorf("the log holds the credential %q:\n%s", secret, got)
		}
	}
}
