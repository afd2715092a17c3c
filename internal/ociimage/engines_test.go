package ociimage

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// require fails the test in CI, where every tool is installed (.ci/run),
// and skips it elsewhere, unless ok.
func require(t *testing.T, ok bool, reason string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (required in CI)", reason)
	}
	t.Skipf("skipping: %s", reason)
}

// lookTool returns the path of the program name on PATH, or requires it.
func lookTool(t *testing.T, name, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	require(t, err == nil, fmt.Sprintf("%s is not installed (Debian package %s)", name, debianPackage))
	return p
}

// engineImage writes an image with a dynamic executable and labels, as the
// engines see the accelstack images, and returns its archive and digest.
func engineImage(t *testing.T) (img Image, archive, digest string) {
	t.Helper()
	img = Image{
		Ref:        "registry.example.com/accelstack/engine-test:v1",
		Entrypoint: []string{"/usr/bin/ls"},
		Env:        []string{"PATH=/usr/bin"},
		User:       "65532:65532",
		Labels:     map[string]string{"org.opencontainers.image.version": "v1.2.3"},
	}
	if err := img.AddExecutable("/bin/ls", "/usr/bin/ls"); err != nil {
		t.Fatal(err)
	}
	archive = filepath.Join(t.TempDir(), "engine-test.tar")
	digest, err := Write(context.Background(), img, archive)
	if err != nil {
		t.Fatal(err)
	}
	return img, archive, digest
}

func TestSkopeoReadsArchive(t *testing.T) {
	skopeo := lookTool(t, "skopeo", "skopeo")
	img, archive, digest := engineImage(t)
	run := func(args ...string) []byte {
		t.Helper()
		out, err := exec.Command(skopeo, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("skopeo %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	var inspect struct {
		Digest       string
		Labels       map[string]string
		Architecture string
		Os           string
		Layers       []string
	}
	if err := json.Unmarshal(run("inspect", "oci-archive:"+archive), &inspect); err != nil {
		t.Fatal(err)
	}
	l := readLayout(t, archive)
	if inspect.Digest != digest || inspect.Os != "linux" || inspect.Architecture != l.config.Architecture ||
		inspect.Labels["org.opencontainers.image.version"] != "v1.2.3" ||
		!slices.Equal(inspect.Layers, []string{l.manifest.Layers[0].Digest}) {
		t.Errorf("skopeo inspect = %+v; want digest %s, linux/%s, the version label and layer %s",
			inspect, digest, l.config.Architecture, l.manifest.Layers[0].Digest)
	}
	var config struct {
		Config struct {
			Entrypoint []string
			User       string
		} `json:"config"`
	}
	if err := json.Unmarshal(run("inspect", "--config", "oci-archive:"+archive), &config); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(config.Config.Entrypoint, img.Entrypoint) || config.Config.User != img.User {
		t.Errorf("skopeo inspect --config = %+v, want entrypoint %q user %q", config.Config, img.Entrypoint, img.User)
	}

	// skopeo finds the image by its tag (the ref name annotation) and, in
	// copying it, checks every blob against its digest.
	dir := filepath.Join(t.TempDir(), "copy")
	run("copy", "oci-archive:"+archive+":v1", "dir:"+dir)
	layer, err := os.ReadFile(filepath.Join(dir, strings.TrimPrefix(l.manifest.Layers[0].Digest, "sha256:")))
	if err != nil {
		t.Fatal(err)
	}
	if d := sha256Digest(layer); d != l.manifest.Layers[0].Digest {
		t.Errorf("skopeo copied a layer of digest %s, want %s", d, l.manifest.Layers[0].Digest)
	}
	if out, err := exec.Command(skopeo, "inspect", "oci-archive:"+archive+":v2").CombinedOutput(); err == nil {
		t.Errorf("skopeo found tag v2 in an archive of v1:\n%s", out)
	}
}

func TestContainerdImportsArchive(t *testing.T) {
	containerd := lookTool(t, "containerd", "containerd")
	ctr := lookTool(t, "ctr", "containerd")
	require(t, os.Geteuid() == 0, "containerd runs as root")
	_, archive, digest := engineImage(t)

	// A containerd of its own: state under a temporary directory, no CRI,
	// no /opt plugin directory, so nothing outside it changes.
	dir := t.TempDir()
	sock := filepath.Join(dir, "containerd.sock")
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
[grpc]
  address = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock)
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	daemon := exec.Command(containerd, "--config", filepath.Join(dir, "config.toml"))
	daemon.Stdout, daemon.Stderr = log, log
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = daemon.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- daemon.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = daemon.Process.Kill()
			<-done
		}
	})
	ctrRun := func(args ...string) (string, error) {
		out, err := exec.Command(ctr, append([]string{"--address", sock, "-n", "accelstack-test"}, args...)...).CombinedOutput()
		return string(out), err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := ctrRun("version"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("containerd did not answer on %s:\n%s", sock, b)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Import unpacks the layer, which checks it against the config's diff ID.
	if out, err := ctrRun("images", "import", archive); err != nil {
		t.Fatalf("ctr images import: %v\n%s", err, out)
	}
	out, err := ctrRun("images", "check")
	if err != nil {
		t.Fatalf("ctr images check: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("ctr images check lists %d images, want 1:\n%s", len(lines)-1, out)
	}
	fields := strings.Fields(lines[1])
	if fields[0] != "registry.example.com/accelstack/engine-test:v1" || fields[2] != digest ||
		!strings.Contains(lines[1], "complete") || fields[len(fields)-1] != "true" {
		t.Errorf("ctr images check:\n%s\nwant registry.example.com/accelstack/engine-test:v1 at %s, complete and unpacked", out, digest)
	}
}
