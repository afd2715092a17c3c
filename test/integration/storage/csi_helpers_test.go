package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/minio/minio-go/v7"

	"github.com/accelstack/accelstack/test/harness"
)

// csiMounters are the mounters every data-path test runs with.
var csiMounters = []string{"rclone", "s3fs"}

// requireMounter skips (or fails in CI) when a mounter's binary is absent.
func requireMounter(t *testing.T, name string) {
	t.Helper()
	if _, err := harness.Tool(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mounter %s: %v", name, err)
		}
		t.Skipf("skipping: mounter %s: %v", name, err)
	}
}

// s3envSecrets is the S3-env secret layout for srv.
func s3envSecrets(srv *harness.S3Server) map[string]string {
	return map[string]string{
		"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey,
		"endpoint": srv.Endpoint, "region": srv.Region,
	}
}

// s3cfgSecrets is the `.s3cfg` secret layout for srv.
func s3cfgSecrets(srv *harness.S3Server) map[string]string {
	return map[string]string{".s3cfg": srv.S3cfg()}
}

// mountCap is a multi-node-writer mount capability.
func mountCap(mode csipb.VolumeCapability_AccessMode_Mode) *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: mode},
	}
}

// csiClient bundles the plugin's clients with the test's paths.
type csiClient struct {
	t     *testing.T
	drv   *harness.CSIS3
	ctrl  csipb.ControllerClient
	node  csipb.NodeClient
	ctx   context.Context
	paths int
}

// newCSIClient starts a plugin for the test.
func newCSIClient(t *testing.T, extra ...string) *csiClient {
	t.Helper()
	harness.RequireFUSE(t)
	drv := harness.StartCSIS3(t, extra...)
	c := &csiClient{t: t, drv: drv, ctx: context.Background()}
	c.connect()
	return c
}

// connect (re)connects to the plugin.
func (c *csiClient) connect() {
	conn := c.drv.Conn(c.t)
	c.ctrl, c.node = csipb.NewControllerClient(conn), csipb.NewNodeClient(conn)
}

// path returns a fresh path under the plugin's dir.
func (c *csiClient) path(kind string) string {
	c.paths++
	return filepath.Join(c.drv.Dir(), fmt.Sprintf("%s-%d", kind, c.paths))
}

// stage stages vol at a fresh staging path, which it returns.
func (c *csiClient) stage(volID string, volCtx, secrets map[string]string) (string, error) {
	staging := c.path("staging")
	_, err := c.node.NodeStageVolume(c.ctx, &csipb.NodeStageVolumeRequest{
		VolumeId: volID, StagingTargetPath: staging, VolumeContext: volCtx, Secrets: secrets,
		VolumeCapability: mountCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER),
	})
	return staging, err
}

// publish publishes a staged volume at a fresh target path.
func (c *csiClient) publish(volID, staging string, volCtx map[string]string, readOnly bool) (string, error) {
	target := c.path("target")
	_, err := c.node.NodePublishVolume(c.ctx, &csipb.NodePublishVolumeRequest{
		VolumeId: volID, StagingTargetPath: staging, TargetPath: target, VolumeContext: volCtx, Readonly: readOnly,
		VolumeCapability: mountCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER),
	})
	return target, err
}

// mustStagePublish stages and publishes, failing the test on error.
func (c *csiClient) mustStagePublish(volID string, volCtx, secrets map[string]string) (staging, target string) {
	c.t.Helper()
	staging, err := c.stage(volID, volCtx, secrets)
	if err != nil {
		c.t.Fatalf("NodeStageVolume: %v", err)
	}
	target, err = c.publish(volID, staging, volCtx, false)
	if err != nil {
		c.t.Fatalf("NodePublishVolume: %v", err)
	}
	return staging, target
}

// unpublishUnstage undoes mustStagePublish and checks nothing is left.
func (c *csiClient) unpublishUnstage(volID, staging, target string) {
	c.t.Helper()
	if _, err := c.node.NodeUnpublishVolume(c.ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: volID, TargetPath: target}); err != nil {
		c.t.Fatalf("NodeUnpublishVolume: %v", err)
	}
	if _, err := c.node.NodeUnstageVolume(c.ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: volID, StagingTargetPath: staging}); err != nil {
		c.t.Fatalf("NodeUnstageVolume: %v", err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		c.t.Errorf("target %s still exists after unpublish: %v", target, err)
	}
	c.requireNoMounts()
}

// requireNoMounts fails if anything is mounted under the plugin's dir.
func (c *csiClient) requireNoMounts() {
	c.t.Helper()
	mps, err := harness.Mounts(c.drv.Dir())
	if err != nil {
		c.t.Fatal(err)
	}
	if len(mps) != 0 {
		c.t.Errorf("mounts left behind: %v", mps)
	}
}

// makeBucket creates a bucket with the root client.
func makeBucket(t *testing.T, srv *harness.S3Server, name string) *minio.Client {
	t.Helper()
	cl, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.MakeBucket(context.Background(), name, minio.MakeBucketOptions{Region: srv.Region}); err != nil {
		t.Fatalf("make bucket %s: %v", name, err)
	}
	return cl
}

// objectSHA256 returns the hex sha256 of an object, waiting (up to a
// generous bound, for mounters that upload after close) until it exists
// with the wanted size.
func objectSHA256(t *testing.T, cl *minio.Client, bucket, key string, size int64) string {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		info, err := cl.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
		if err == nil && info.Size == size {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("object %s/%s never reached %d bytes: %v %+v", bucket, key, size, err, info.Size)
		}
		time.Sleep(100 * time.Millisecond)
	}
	obj, err := cl.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	h := sha256.New()
	if _, err := io.Copy(h, obj); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fileSHA256 returns the hex sha256 of a file.
func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
