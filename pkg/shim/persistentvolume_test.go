package shim

import (
	"strings"
	"testing"

	"github.com/accelstack/accelstack/pkg/csis3"
	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

func TestParseS3URI(t *testing.T) {
	testCases := []struct {
		uri                    string
		wantBucket, wantPrefix string
		wantErr                string
	}{
		{uri: "s3://bucket", wantBucket: "bucket"},
		{uri: "s3://bucket/", wantBucket: "bucket"},
		{uri: "s3://bucket/a/b/", wantBucket: "bucket", wantPrefix: "a/b"},
		{uri: "s3://bucket/a//c", wantErr: "must not contain empty path segments"},
		{uri: "s3://bucket//a", wantErr: "must not contain empty path segments"},
		{uri: "s3://bucket/a//", wantErr: "must not contain empty path segments"},
		{uri: "s3://bucket/a%2F%2Fc", wantErr: "must not contain empty path segments"},
		{uri: "s3://bucket/a/../b", wantErr: "must not contain . or .."},
		{uri: "http://bucket/a", wantErr: "is not of the form"},
	}
	for _, tc := range testCases {
		t.Run(tc.uri, func(t *testing.T) {
			bucket, prefix, err := ParseS3URI(tc.uri)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "spec.s3.uri") {
					t.Fatalf("ParseS3URI = %v, want an error naming spec.s3.uri and containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if bucket != tc.wantBucket || prefix != tc.wantPrefix {
				t.Fatalf("ParseS3URI = %q, %q; want %q, %q", bucket, prefix, tc.wantBucket, tc.wantPrefix)
			}
			// What the controller accepts, the driver must mount.
			if _, err := csis3.VolumeFromContext("h", map[string]string{s3volume.AttrBucket: bucket, s3volume.AttrPrefix: prefix}, csis3.MounterRclone); err != nil {
				t.Errorf("the driver refuses the volume: %v", err)
			}
		})
	}
}
