package integration

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/accelstack/accelstack/test/harness"
)

// TestS3PutGet puts and gets an object through the real S3 server and
// through the in-process fake, so both stay usable for later tests.
func TestS3PutGet(t *testing.T) {
	t.Parallel()
	testCases := []struct {
		name  string
		start func(testing.TB) *harness.S3Server
	}{
		{name: "versitygw", start: harness.StartS3},
		{name: "gofakes3", start: harness.StartFakeS3},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.start(t)
			c, err := srv.Client()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			if err := c.MakeBucket(ctx, "datasets", minio.MakeBucketOptions{Region: srv.Region}); err != nil {
				t.Fatalf("make bucket: %v", err)
			}
			payload := bytes.Repeat([]byte("accelstack "), 10000)
			if _, err := c.PutObject(ctx, "datasets", "mnist/train.bin", bytes.NewReader(payload), int64(len(payload)), minio.PutObjectOptions{}); err != nil {
				t.Fatalf("put: %v", err)
			}
			obj, err := c.GetObject(ctx, "datasets", "mnist/train.bin", minio.GetObjectOptions{})
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			got, err := io.ReadAll(obj)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if !bytes.Equal(got, payload) {
				t.Fatalf("got %d bytes back, want the %d bytes put", len(got), len(payload))
			}
			var keys []string
			for o := range c.ListObjects(ctx, "datasets", minio.ListObjectsOptions{Prefix: "mnist/"}) {
				if o.Err != nil {
					t.Fatalf("list: %v", o.Err)
				}
				keys = append(keys, o.Key)
			}
			if len(keys) != 1 || keys[0] != "mnist/train.bin" {
				t.Fatalf("list = %v, want [mnist/train.bin]", keys)
			}
			if _, err := c.StatObject(ctx, "datasets", "missing", minio.StatObjectOptions{}); minio.ToErrorResponse(err).Code != "NoSuchKey" {
				t.Fatalf("stat of a missing key = %v, want NoSuchKey", err)
			}
		})
	}
}
