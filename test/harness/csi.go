package harness

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// CSIS3 is a csi-s3 plugin process started for a test, serving every CSI
// service on a unix socket in a temp dir with its own state dir.
type CSIS3 struct {
	// Endpoint is the plugin's unix:// endpoint.
	Endpoint string
	// StateDir is the plugin's --state-dir.
	StateDir string
	// LogPath is the current process's log file.
	LogPath string
	// Proc is the current process.
	Proc *Process

	bin, dir string
	args     []string
	restarts int
}

// StartCSIS3 builds and starts csi-s3 with --mode=all, the cached rclone,
// Debian's s3fs, daemons in their own session, -v=10, and extra flags. At
// the end of the test it stops the plugin and lazily unmounts whatever is
// still mounted under its directory.
func StartCSIS3(t testing.TB, extra ...string) *CSIS3 {
	t.Helper()
	bin, err := BuildCmd("csi-s3")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rclone, err := Tool("rclone")
	if err != nil {
		rclone = "rclone"
	}
	d := &CSIS3{
		Endpoint: "unix://" + filepath.Join(dir, "csi.sock"),
		StateDir: filepath.Join(dir, "state"),
		bin:      bin, dir: dir,
	}
	d.args = append([]string{
		"--mode=all", "--endpoint=" + d.Endpoint, "--node-id=test-node",
		"--state-dir=" + d.StateDir, "--rclone=" + rclone, "--s3fs=s3fs",
		"--systemd=false", "-v=10",
	}, extra...)
	t.Cleanup(func() {
		if d.Proc != nil {
			_ = d.Proc.Stop()
			if t.Failed() {
				t.Logf("log of csi-s3:\n%s", d.Proc.Log())
			}
		}
		UnmountUnder(t, dir)
	})
	d.start(t)
	return d
}

// Dir is the plugin's temp dir; put staging and target paths under it so
// the cleanup finds them.
func (d *CSIS3) Dir() string { return d.dir }

// start runs the plugin and waits until it answers Probe.
func (d *CSIS3) start(t testing.TB) {
	t.Helper()
	d.LogPath = filepath.Join(d.dir, fmt.Sprintf("csi-s3.%d.log", d.restarts))
	d.restarts++
	p, err := RunProcess("csi-s3", d.bin, d.args, d.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	d.Proc = p
	conn := d.Conn(t)
	err = p.WaitReady(30*time.Second, func(ctx context.Context) error {
		_, err := csipb.NewIdentityClient(conn).Probe(ctx, &csipb.ProbeRequest{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Kill sends SIGKILL to the plugin process alone (not to its FUSE
// daemons) and waits for it to die.
func (d *CSIS3) Kill() {
	_ = syscall.Kill(d.Proc.cmd.Process.Pid, syscall.SIGKILL)
	<-d.Proc.done
}

// Restart starts the plugin again with the same flags and state dir.
func (d *CSIS3) Restart(t testing.TB) {
	t.Helper()
	if !d.Proc.Exited() {
		if err := d.Proc.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	d.start(t)
}

// Conn returns a gRPC connection to the plugin, closed when the test ends.
func (d *CSIS3) Conn(t testing.TB) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(d.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Mounts returns the mount points at or under root from
// /proc/self/mountinfo; "/" returns them all.
func Mounts(root string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountPath(fields[4])
		if root == "/" || mp == root || strings.HasPrefix(mp, root+"/") {
			out = append(out, mp)
		}
	}
	return out, sc.Err()
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// UnmountUnder lazily unmounts every mount under root, deepest first, so a
// failed test leaves no mount behind. FUSE daemons exit once unmounted.
func UnmountUnder(t testing.TB, root string) {
	t.Helper()
	mps, err := Mounts(root)
	if err != nil {
		t.Logf("reading mountinfo: %v", err)
		return
	}
	for i := len(mps) - 1; i >= 0; i-- {
		if err := unix.Unmount(mps[i], unix.MNT_DETACH); err != nil {
			t.Logf("unmounting %s: %v", mps[i], err)
		}
	}
}
