package csis3

import (
	"context"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestControllerServer creates and deletes bucket and prefix volumes on
// the in-process S3 fake and checks idempotency and that static data is
// never deleted.
func TestControllerServer(t *testing.T) {
	srv, cl := startFakeS3(t)
	ctx := context.Background()
	for _, b := range []string{"shared", "static"} {
		if err := cl.MakeBucket(ctx, b, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cs := &controllerServer{cfg: DefaultConfig(), locks: newKeyedMutex()}
	secrets := map[string]string{"accessKeyID": "fake", "secretAccessKey": "fake-secret", "endpoint": srv}
	caps := []*csipb.VolumeCapability{{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER},
	}}
	create := func(name string, params map[string]string, size int64) (*csipb.Volume, error) {
		resp, err := cs.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: name, Parameters: params, Secrets: secrets, VolumeCapabilities: caps, CapacityRange: &csipb.CapacityRange{RequiredBytes: size}})
		return resp.GetVolume(), err
	}
	testCases := []struct {
		name     string
		params   map[string]string
		wantID   string
		wantCtx  map[string]string
		wantKeep string // bucket that must survive DeleteVolume
	}{
		{name: "pvc-1", wantID: "pvc-1", wantCtx: map[string]string{"bucket": "pvc-1"}},
		{name: "PVC_2", params: map[string]string{"bucket": "shared", "mounter": "s3fs", "csi.storage.k8s.io/pvc/name": "x"}, wantID: "shared/" + sanitizeName("PVC_2"),
			wantCtx: map[string]string{"bucket": "shared", "prefix": sanitizeName("PVC_2"), "mounter": "s3fs"}, wantKeep: "shared"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			vol, err := create(tc.name, tc.params, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantCtx, vol.GetVolumeContext()); diff != "" || vol.GetVolumeId() != tc.wantID {
				t.Errorf("volume %s, context (-want +got):\n%s", vol.GetVolumeId(), diff)
			}
			again, err := create(tc.name, tc.params, 1<<30)
			if err != nil || again.GetVolumeId() != vol.GetVolumeId() {
				t.Errorf("CreateVolume again = %v, %v; want the same volume", again, err)
			}
			if _, err := create(tc.name, tc.params, 2<<30); status.Code(err) != codes.AlreadyExists {
				t.Errorf("CreateVolume with another size = %v, want AlreadyExists", err)
			}
			for range 2 {
				if _, err := cs.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: vol.GetVolumeId(), Secrets: secrets}); err != nil {
					t.Fatalf("DeleteVolume: %v", err)
				}
			}
			bucket := vol.GetVolumeContext()["bucket"]
			exists, err := cl.BucketExists(ctx, bucket)
			if err != nil || exists != (tc.wantKeep != "") {
				t.Errorf("bucket %s exists = %t, %v after DeleteVolume; want %t", bucket, exists, err, tc.wantKeep != "")
			}
		})
	}

	t.Run("static volumes are never deleted", func(t *testing.T) {
		if _, err := cs.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: "static", Secrets: secrets}); err != nil {
			t.Fatal(err)
		}
		if ok, _ := cl.BucketExists(ctx, "static"); !ok {
			t.Errorf("DeleteVolume removed a bucket it did not create")
		}
	})
	t.Run("validate", func(t *testing.T) {
		resp, err := cs.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "static", VolumeCapabilities: caps, Secrets: secrets})
		if err != nil || resp.GetConfirmed() == nil {
			t.Errorf("ValidateVolumeCapabilities = %v, %v; want confirmed", resp, err)
		}
		if _, err := cs.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "missing-bucket", VolumeCapabilities: caps, Secrets: secrets}); status.Code(err) != codes.NotFound {
			t.Errorf("ValidateVolumeCapabilities of a missing bucket = %v, want NotFound", err)
		}
		block := []*csipb.VolumeCapability{{AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}}, AccessMode: caps[0].AccessMode}}
		resp, err = cs.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "static", VolumeCapabilities: block})
		if err != nil || resp.GetConfirmed() != nil {
			t.Errorf("ValidateVolumeCapabilities(block) = %v, %v; want not confirmed", resp, err)
		}
	})
}
