package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/minio/minio-go/v7"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/accelstack/accelstack/test/harness"
)

// createVolume provisions a volume through the controller.
func (c *csiClient) createVolume(name string, params, secrets map[string]string) *csipb.Volume {
	c.t.Helper()
	resp, err := c.ctrl.CreateVolume(c.ctx, &csipb.CreateVolumeRequest{
		Name: name, Parameters: params, Secrets: secrets,
		VolumeCapabilities: []*csipb.VolumeCapability{mountCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)},
	})
	if err != nil {
		c.t.Fatalf("CreateVolume: %v", err)
	}
	return resp.GetVolume()
}

// randomBytes returns n random bytes.
func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// sum is the hex sha256 of b.
func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestCSIDataPath writes and reads through a published mount and through
// the S3 API and compares checksums both ways, then lists, renames,
// appends and deletes, with each mounter, on a prefix volume.
func TestCSIDataPath(t *testing.T) {
	for _, m := range csiMounters {
		t.Run(m, func(t *testing.T) {
			requireMounter(t, m)
			srv := harness.StartS3(t)
			cl := makeBucket(t, srv, "shared")
			c := newCSIClient(t)
			secrets := s3envSecrets(srv)
			params := map[string]string{"bucket": "shared", "mounter": m}
			if m == "rclone" {
				// New objects show after the directory cache expires.
				params["options"] = "--dir-cache-time=2s"
			}
			vol := c.createVolume("pvc-data-"+m, params, secrets)
			prefix := vol.GetVolumeContext()["prefix"]
			if vol.GetVolumeId() != "shared/"+prefix || prefix == "" {
				t.Fatalf("volume = %v, want shared/<prefix>", vol)
			}
			staging, target := c.mustStagePublish(vol.GetVolumeId(), vol.GetVolumeContext(), secrets)

			// Mount -> S3.
			data := randomBytes(t, 8<<20)
			if err := os.WriteFile(filepath.Join(target, "a.bin"), data, 0o644); err != nil {
				t.Fatalf("writing through the mount: %v", err)
			}
			if got := objectSHA256(t, cl, "shared", prefix+"/a.bin", int64(len(data))); got != sum(data) {
				t.Errorf("S3 object sha256 = %s, want %s", got, sum(data))
			}
			// S3 -> mount.
			other := randomBytes(t, 3<<20)
			if _, err := cl.PutObject(context.Background(), "shared", prefix+"/dir/b.bin", bytes.NewReader(other), int64(len(other)), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			waitVisible(t, filepath.Join(target, "dir", "b.bin"))
			if got := fileSHA256(t, filepath.Join(target, "dir", "b.bin")); got != sum(other) {
				t.Errorf("sha256 through the mount = %s, want %s", got, sum(other))
			}
			// Listing.
			entries, err := os.ReadDir(target)
			if err != nil {
				t.Fatalf("listing: %v", err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if !slices.Contains(names, "a.bin") || !slices.Contains(names, "dir") {
				t.Errorf("listing = %v, want a.bin and dir", names)
			}
			// Rename.
			if err := os.Rename(filepath.Join(target, "a.bin"), filepath.Join(target, "c.bin")); err != nil {
				t.Fatalf("rename: %v", err)
			}
			if got := objectSHA256(t, cl, "shared", prefix+"/c.bin", int64(len(data))); got != sum(data) {
				t.Errorf("renamed object sha256 = %s, want %s", got, sum(data))
			}
			if _, err := os.Stat(filepath.Join(target, "a.bin")); !os.IsNotExist(err) {
				t.Errorf("a.bin after rename: %v, want not exist", err)
			}
			// Append.
			f, err := os.OpenFile(filepath.Join(target, "c.bin"), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatalf("open for append: %v", err)
			}
			if _, err := f.Write([]byte("tail")); err != nil {
				t.Fatalf("append: %v", err)
			}
			if err := f.Close(); err != nil {
				t.Fatalf("close after append: %v", err)
			}
			want := append(slices.Clone(data), "tail"...)
			if got := fileSHA256(t, filepath.Join(target, "c.bin")); got != sum(want) {
				t.Errorf("appended file sha256 = %s, want %s", got, sum(want))
			}
			if got := objectSHA256(t, cl, "shared", prefix+"/c.bin", int64(len(want))); got != sum(want) {
				t.Errorf("appended object sha256 = %s, want %s", got, sum(want))
			}
			// Delete.
			if err := os.Remove(filepath.Join(target, "c.bin")); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if _, err := os.Stat(filepath.Join(target, "c.bin")); !os.IsNotExist(err) {
				t.Errorf("c.bin after delete: %v, want not exist", err)
			}

			c.unpublishUnstage(vol.GetVolumeId(), staging, target)
			if _, err := c.ctrl.DeleteVolume(c.ctx, &csipb.DeleteVolumeRequest{VolumeId: vol.GetVolumeId(), Secrets: secrets}); err != nil {
				t.Fatalf("DeleteVolume: %v", err)
			}
			for o := range cl.ListObjects(context.Background(), "shared", minio.ListObjectsOptions{Prefix: prefix + "/", Recursive: true}) {
				t.Errorf("object %s left after DeleteVolume (err %v)", o.Key, o.Err)
			}
		})
	}
}

// waitVisible waits until an object created through S3 shows in the mount,
// which takes up to the mounter's directory cache time.
func waitVisible(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := os.Stat(path)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared in the mount: %v", path, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestCSIReadOnly checks that read-only publishing and the readOnly volume
// attribute both make writes fail with EROFS.
func TestCSIReadOnly(t *testing.T) {
	for _, m := range csiMounters {
		t.Run(m, func(t *testing.T) {
			requireMounter(t, m)
			srv := harness.StartS3(t)
			makeBucket(t, srv, "ro-data")
			c := newCSIClient(t)
			secrets := s3cfgSecrets(srv)

			volCtx := map[string]string{"mounter": m}
			staging, err := c.stage("ro-data", volCtx, secrets)
			if err != nil {
				t.Fatal(err)
			}
			target, err := c.publish("ro-data", staging, volCtx, true)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(target, "x"), []byte("x"), 0o644); !errors.Is(err, syscall.EROFS) {
				t.Errorf("write to a read-only publish = %v, want EROFS", err)
			}
			c.unpublishUnstage("ro-data", staging, target)

			volCtx = map[string]string{"mounter": m, "bucket": "ro-data", "readOnly": "true"}
			staging, target = c.mustStagePublish("static-ro", volCtx, secrets)
			if err := os.WriteFile(filepath.Join(target, "x"), []byte("x"), 0o644); !errors.Is(err, syscall.EROFS) {
				t.Errorf("write to a readOnly volume = %v, want EROFS", err)
			}
			c.unpublishUnstage("static-ro", staging, target)
		})
	}
}

// TestCSICredentials stages with both secret layouts and with missing,
// malformed and refused credentials; failures leave nothing behind.
func TestCSICredentials(t *testing.T) {
	srv := harness.StartS3(t)
	makeBucket(t, srv, "creds")
	c := newCSIClient(t)
	wrong := s3envSecrets(srv)
	wrong["secretAccessKey"] = "wrong-secret-value"
	noSecret := s3envSecrets(srv)
	delete(noSecret, "secretAccessKey")
	badCfg := s3cfgSecrets(srv)
	badCfg[".s3cfg"] = strings.Replace(badCfg[".s3cfg"], "use_https = False", "use_https = maybe", 1)
	noHost := map[string]string{".s3cfg": "[default]\naccess_key = a\nsecret_key = b\n"}
	testCases := []struct {
		name     string
		secrets  map[string]string
		wantCode codes.Code
		wantMsg  string
	}{
		{name: "s3-env layout", secrets: s3envSecrets(srv), wantCode: codes.OK},
		{name: "s3cfg layout", secrets: s3cfgSecrets(srv), wantCode: codes.OK},
		{name: "no secrets", secrets: nil, wantCode: codes.InvalidArgument, wantMsg: "accessKeyID"},
		{name: "missing secretAccessKey", secrets: noSecret, wantCode: codes.InvalidArgument, wantMsg: "secretAccessKey"},
		{name: "malformed s3cfg", secrets: badCfg, wantCode: codes.InvalidArgument, wantMsg: "use_https"},
		{name: "s3cfg without host_base", secrets: noHost, wantCode: codes.InvalidArgument, wantMsg: "host_base"},
		{name: "refused by the server", secrets: wrong, wantCode: codes.PermissionDenied},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			volCtx := map[string]string{"mounter": "s3fs"}
			staging, err := c.stage("creds", volCtx, tc.secrets)
			if status.Code(err) != tc.wantCode || !strings.Contains(status.Convert(err).Message(), tc.wantMsg) {
				t.Fatalf("NodeStageVolume = %v, want code %s with %q", err, tc.wantCode, tc.wantMsg)
			}
			if tc.wantCode == codes.OK {
				if _, err := os.ReadDir(staging); err != nil {
					t.Errorf("reading the staged mount: %v", err)
				}
				if _, err := c.node.NodeUnstageVolume(c.ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: "creds", StagingTargetPath: staging}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := os.Stat(staging); !os.IsNotExist(err) {
				t.Errorf("staging path %s left behind: %v", staging, err)
			}
			c.requireNoMounts()
			left, err := os.ReadDir(filepath.Join(c.drv.StateDir, "volumes"))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("reading the state dir: %v", err)
			}
			if len(left) != 0 {
				t.Errorf("state left behind: %v", left)
			}
		})
	}
}

// TestCSITraversal refuses prefixes and volume IDs that leave the bucket.
func TestCSITraversal(t *testing.T) {
	srv := harness.StartS3(t)
	makeBucket(t, srv, "jail")
	c := newCSIClient(t)
	testCases := []struct {
		name   string
		volID  string
		volCtx map[string]string
	}{
		{name: "dotdot prefix", volID: "v1", volCtx: map[string]string{"bucket": "jail", "prefix": "data/../../etc"}},
		{name: "absolute prefix", volID: "v2", volCtx: map[string]string{"bucket": "jail", "prefix": "/etc"}},
		{name: "dotdot in volume ID", volID: "jail/../etc", volCtx: nil},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.stage(tc.volID, tc.volCtx, s3envSecrets(srv))
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("NodeStageVolume = %v, want InvalidArgument", err)
			}
			c.requireNoMounts()
		})
	}
}

// TestCSISecretsNotLogged runs a whole lifecycle with each mounter, both
// secret layouts and refused credentials at -v=10, and searches the
// plugin's log, the FUSE daemons' logs (copied before unstage removes
// them) and the state records for the secret values.
func TestCSISecretsNotLogged(t *testing.T) {
	for _, m := range csiMounters {
		t.Run(m, func(t *testing.T) {
			requireMounter(t, m)
			srv := harness.StartS3(t)
			c := newCSIClient(t)
			const badSecret = "wrong-secret-value-4b1d"
			var logs []byte
			records := 0
			for i, secrets := range []map[string]string{s3envSecrets(srv), s3cfgSecrets(srv)} {
				vol := c.createVolume("pvc-logged-"+m+"-"+strconv.Itoa(i), map[string]string{"mounter": m}, secrets)
				staging, target := c.mustStagePublish(vol.GetVolumeId(), vol.GetVolumeContext(), secrets)
				if err := os.WriteFile(filepath.Join(target, "f"), []byte("data"), 0o644); err != nil {
					t.Fatal(err)
				}
				for _, pattern := range []string{"daemon.log*", "record.json"} {
					paths, err := filepath.Glob(filepath.Join(c.drv.StateDir, "volumes", "*", pattern))
					if err != nil || len(paths) == 0 {
						t.Fatalf("state files %s = %v, %v; want some", pattern, paths, err)
					}
					for _, p := range paths {
						b, err := os.ReadFile(p)
						if err != nil {
							t.Fatal(err)
						}
						logs = append(logs, b...)
						if pattern == "record.json" {
							records++
						}
					}
				}
				c.unpublishUnstage(vol.GetVolumeId(), staging, target)
				if _, err := c.ctrl.DeleteVolume(c.ctx, &csipb.DeleteVolumeRequest{VolumeId: vol.GetVolumeId(), Secrets: secrets}); err != nil {
					t.Fatal(err)
				}
			}
			bad := s3envSecrets(srv)
			bad["secretAccessKey"] = badSecret
			if _, err := c.stage("pvc-logged-bad", map[string]string{"mounter": m}, bad); status.Code(err) != codes.PermissionDenied {
				t.Errorf("stage with a wrong secret = %v, want PermissionDenied", err)
			}
			paths, _ := filepath.Glob(filepath.Join(c.drv.Dir(), "csi-s3.*.log"))
			for _, p := range paths {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				logs = append(logs, b...)
			}
			if !bytes.Contains(logs, []byte("CSI request")) || !bytes.Contains(logs, []byte("***stripped***")) {
				t.Fatalf("the log holds no CSI requests at -v=10; is verbosity on?")
			}
			if records != 2 {
				t.Fatalf("searched %d state records, want 2", records)
			}
			for _, secret := range []string{srv.SecretKey, badSecret} {
				if bytes.Contains(logs, []byte(secret)) {
					t.Errorf("a log or state record contains the secret %q", secret)
				}
			}
		})
	}
}

// stateRecord reads the plugin's record of its only staged volume.
func stateRecord(t *testing.T, stateDir string) (pid int) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(stateDir, "volumes", "*", "record.json"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("state records = %v, %v; want one", paths, err)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Daemon struct {
			PID int `json:"pid"`
		} `json:"daemon"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.Daemon.PID
}

// TestCSIHealsDeadDaemon kills the FUSE daemon: volume health reports the
// volume inaccessible and the next publish remounts it.
func TestCSIHealsDeadDaemon(t *testing.T) {
	for _, m := range csiMounters {
		t.Run(m, func(t *testing.T) {
			requireMounter(t, m)
			srv := harness.StartS3(t)
			cl := makeBucket(t, srv, "heal")
			payload := randomBytes(t, 1<<20)
			if _, err := cl.PutObject(context.Background(), "heal", "f.bin", bytes.NewReader(payload), int64(len(payload)), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			c := newCSIClient(t)
			volCtx := map[string]string{"mounter": m}
			staging, target := c.mustStagePublish("heal", volCtx, s3envSecrets(srv))

			// The kernel reports the dead connection once the process is gone.
			killDaemon(t, stateRecord(t, c.drv.StateDir))
			health, err := c.node.NodeGetVolumeHealth(c.ctx, &csipb.NodeGetVolumeHealthRequest{VolumeId: "heal", VolumePublishPath: target})
			if err != nil {
				t.Fatalf("NodeGetVolumeHealth: %v", err)
			}
			if hs := health.GetVolumeHealth().GetHealthStatuses(); len(hs) != 1 || hs[0].GetStatus() != csipb.VolumeHealthErrorType_INACCESSIBLE {
				t.Errorf("health of a dead mount = %v, want INACCESSIBLE", hs)
			}
			if _, err := c.node.NodeGetVolumeStats(c.ctx, &csipb.NodeGetVolumeStatsRequest{VolumeId: "heal", VolumePath: target}); status.Code(err) != codes.FailedPrecondition {
				t.Errorf("NodeGetVolumeStats of a dead mount = %v, want FailedPrecondition", err)
			}

			target2, err := c.publish("heal", staging, volCtx, false)
			if err != nil {
				t.Fatalf("NodePublishVolume after the daemon died: %v", err)
			}
			if got := fileSHA256(t, filepath.Join(target2, "f.bin")); got != sum(payload) {
				t.Errorf("sha256 after healing = %s, want %s", got, sum(payload))
			}
			// The first target was bound to the dead mount; publishing it
			// again replaces it.
			if _, err := c.node.NodePublishVolume(c.ctx, &csipb.NodePublishVolumeRequest{
				VolumeId: "heal", StagingTargetPath: staging, TargetPath: target, VolumeContext: volCtx,
				VolumeCapability: mountCap(csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER),
			}); err != nil {
				t.Fatalf("re-publishing the dead target: %v", err)
			}
			if got := fileSHA256(t, filepath.Join(target, "f.bin")); got != sum(payload) {
				t.Errorf("sha256 at the re-published target = %s, want %s", got, sum(payload))
			}
			if _, err := c.node.NodeUnpublishVolume(c.ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: "heal", TargetPath: target2}); err != nil {
				t.Fatal(err)
			}
			c.unpublishUnstage("heal", staging, target)
		})
	}
}

// writeMiB is the size of the survival test's write: 256 MiB, or
// $ACCELSTACK_CSI_WRITE_MIB (CI runs it at full size, 1024).
func writeMiB() int {
	if n, err := strconv.Atoi(os.Getenv("ACCELSTACK_CSI_WRITE_MIB")); err == nil && n > 0 {
		return n
	}
	return 256
}

// TestCSISurvivesPluginKill kills the node plugin with SIGKILL while a
// large write runs through the mount: the write completes, the object's
// checksum matches, and a restarted plugin unpublishes and unstages cleanly.
func TestCSISurvivesPluginKill(t *testing.T) {
	for _, m := range csiMounters {
		t.Run(m, func(t *testing.T) {
			requireMounter(t, m)
			srv := harness.StartS3(t)
			cl := makeBucket(t, srv, "survive")
			c := newCSIClient(t)
			volCtx := map[string]string{"mounter": m}
			staging, target := c.mustStagePublish("survive", volCtx, s3envSecrets(srv))

			size := int64(writeMiB()) << 20
			f, err := os.Create(filepath.Join(target, "big.bin"))
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			chunk := randomBytes(t, 1<<20)
			killed := false
			for written := int64(0); written < size; written += int64(len(chunk)) {
				chunk[0]++ // no two chunks alike
				if _, err := f.Write(chunk); err != nil {
					t.Fatalf("write at %d after the plugin was killed=%t: %v", written, killed, err)
				}
				h.Write(chunk)
				if !killed && written >= size/4 {
					c.drv.Kill()
					killed = true
				}
			}
			if err := f.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			want := hex.EncodeToString(h.Sum(nil))
			if got := objectSHA256(t, cl, "survive", "big.bin", size); got != want {
				t.Errorf("object sha256 = %s, want %s", got, want)
			}

			c.drv.Restart(t)
			c.connect()
			if got := fileSHA256(t, filepath.Join(target, "big.bin")); got != want {
				t.Errorf("sha256 through the mount after restart = %s, want %s", got, want)
			}
			pid := stateRecord(t, c.drv.StateDir)
			c.unpublishUnstage("survive", staging, target)
			if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(b), ") Z ") {
				t.Errorf("FUSE daemon %d still runs after unstage", pid)
			}
		})
	}
}

// TestCSIS3Outage stops the S3 server under a mount: I/O fails within a
// bound instead of hanging, and once the server is back a new publish works.
func TestCSIS3Outage(t *testing.T) {
	for _, m := range csiMounters {
		t.Run(m, func(t *testing.T) {
			requireMounter(t, m)
			srv := harness.StartRestartableS3(t)
			cl := makeBucket(t, srv.S3Server, "outage")
			payload := randomBytes(t, 1<<20)
			if _, err := cl.PutObject(context.Background(), "outage", "f.bin", bytes.NewReader(payload), int64(len(payload)), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			c := newCSIClient(t)
			volCtx := map[string]string{"mounter": m}
			secrets := s3envSecrets(srv.S3Server)
			staging, target := c.mustStagePublish("outage", volCtx, secrets)

			srv.Stop(t)
			done := make(chan error, 1)
			go func() {
				_, err := os.ReadFile(filepath.Join(target, "f.bin"))
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, syscall.EIO) {
					t.Errorf("reading with the S3 server down = %v, want EIO", err)
				}
			case <-time.After(5 * time.Minute):
				t.Fatalf("reading with the S3 server down hung for 5 minutes")
			}

			srv.Start(t)
			c.unpublishUnstage("outage", staging, target)
			staging, target = c.mustStagePublish("outage", volCtx, secrets)
			if got := fileSHA256(t, filepath.Join(target, "f.bin")); got != sum(payload) {
				t.Errorf("sha256 after the server came back = %s, want %s", got, sum(payload))
			}
			c.unpublishUnstage("outage", staging, target)
		})
	}
}

// TestCSIUnstageKeepsWrites unstages right after a write: unstaging waits
// for the mounter's pending uploads, so the object is complete at once.
func TestCSIUnstageKeepsWrites(t *testing.T) {
	for _, m := range csiMounters {
		t.Run(m, func(t *testing.T) {
			requireMounter(t, m)
			srv := harness.StartS3(t)
			cl := makeBucket(t, srv, "flush")
			c := newCSIClient(t)
			staging, target := c.mustStagePublish("flush", map[string]string{"mounter": m}, s3envSecrets(srv))
			data := randomBytes(t, 16<<20)
			if err := os.WriteFile(filepath.Join(target, "f.bin"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			c.unpublishUnstage("flush", staging, target)
			obj, err := cl.GetObject(context.Background(), "flush", "f.bin", minio.GetObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			h := sha256.New()
			if _, err := io.Copy(h, obj); err != nil {
				t.Fatalf("reading the object right after unstage: %v", err)
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != sum(data) {
				t.Errorf("object sha256 right after unstage = %s, want %s", got, sum(data))
			}
		})
	}
}
