package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/accelstack/accelstack/test/cluster/image"
	"github.com/accelstack/accelstack/test/harness"
)

// ImageTag is the tag of the images built from this checkout.
const ImageTag = "local"

// Image returns the local image reference of an accelstack binary, e.g.
// localhost/accelstack/csi-s3:local.
func Image(name string) string { return "localhost/accelstack/" + name + ":" + ImageTag }

// binaries are the accelstack commands that get an image each.
var binaries = []string{"controllers", "csi-s3", "datacube-executor", "device-plugin", "node-agent"}

// tools are the pinned tools from the tool cache that get an image each:
// versitygw, the demo's S3 endpoint, and csi-provisioner, the csi-s3
// controller's sidecar.
var tools = []string{"versitygw", "csi-provisioner"}

// buildImages builds the pause and busybox images and one image per
// accelstack binary (the binary and the shared libraries it needs; csi-s3
// also gets rclone, s3fs and fusermount3), plus one per tool. It returns
// the tarball paths; unchanged images are not rewritten.
func (c *Cluster) buildImages(ctx context.Context) ([]string, error) {
	binDir := filepath.Join(c.opts.ImageDir, "bin")
	pause, err := image.BuildPause(ctx, c.root, binDir)
	if err != nil {
		return nil, err
	}
	if err := c.buildBinaries(ctx, binDir); err != nil {
		return nil, err
	}
	imgs := []image.Image{image.Pause(PauseImage, pause)}
	busybox, err := image.Busybox(BusyboxImage, "/bin/busybox")
	if err != nil {
		return nil, err
	}
	imgs = append(imgs, busybox)
	for _, name := range binaries {
		img := image.Image{Ref: Image(name), Entrypoint: []string{"/usr/bin/" + name},
			Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}}
		if err := img.AddExecutable(filepath.Join(binDir, name), "/usr/bin/"+name); err != nil {
			return nil, err
		}
		if name == "controllers" {
			img.User = "65532:65532" // the Deployment runs as non-root
		}
		if name == "csi-s3" {
			if err := addMounters(&img); err != nil {
				return nil, err
			}
		}
		imgs = append(imgs, img)
	}
	for _, name := range tools {
		bin, err := harness.Tool(name)
		if err != nil {
			return nil, err
		}
		img := image.Image{Ref: Image(name), Entrypoint: []string{"/usr/bin/" + name}}
		if err := img.AddExecutable(bin, "/usr/bin/"+name); err != nil {
			return nil, err
		}
		imgs = append(imgs, img)
	}

	var paths []string
	for _, img := range imgs {
		name := strings.NewReplacer("/", "_", ":", "_").Replace(strings.TrimPrefix(img.Ref, "localhost/"))
		path := filepath.Join(c.opts.ImageDir, name+".tar")
		if _, err := image.Write(ctx, img, path); err != nil {
			return nil, fmt.Errorf("writing %s: %w", img.Ref, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// addMounters adds the FUSE mounters csi-s3 runs: rclone (the pinned
// build from the tool cache), s3fs and fusermount3 from the host, and
// util-linux's mount, umount and findmnt for its bind mounts.
func addMounters(img *image.Image) error {
	rclone, err := harness.Tool("rclone")
	if err != nil {
		return err
	}
	rclone, err = filepath.EvalSymlinks(rclone)
	if err != nil {
		return err
	}
	for host, in := range map[string]string{rclone: "/usr/bin/rclone", "/usr/bin/s3fs": "/usr/bin/s3fs", "/bin/fusermount3": "/usr/bin/fusermount3",
		"/bin/mount": "/usr/bin/mount", "/bin/umount": "/usr/bin/umount", "/bin/findmnt": "/usr/bin/findmnt"} {
		if err := img.AddExecutable(host, in); err != nil {
			return err
		}
	}
	img.AddSymlink("/usr/bin/fusermount", "fusermount3")
	return nil
}

// buildBinaries builds the accelstack commands into dir, version stamped
// like `make build`.
func (c *Cluster) buildBinaries(ctx context.Context, dir string) error {
	pkgs := make([]string, len(binaries))
	for i, b := range binaries {
		pkgs[i] = "./cmd/" + b
	}
	version := "local"
	if out, err := exec.CommandContext(ctx, "git", "-C", c.root, "describe", "--tags", "--always", "--dirty").Output(); err == nil {
		version = strings.TrimSpace(string(out))
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-trimpath",
		"-ldflags", "-X github.com/accelstack/accelstack/pkg/version.gitVersion=" + version, "-o", dir + "/"}, pkgs...)...)
	cmd.Dir = c.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	return nil
}

// importImages imports the tarballs into containerd's Kubernetes namespace.
func (c *Cluster) importImages(ctx context.Context, paths []string) error {
	for _, p := range paths {
		out, err := exec.CommandContext(ctx, "ctr", "--address", c.l.containerdSocket(), "-n", "k8s.io",
			"images", "import", p).CombinedOutput()
		if err != nil {
			return fmt.Errorf("importing %s: %w: %s", p, err, out)
		}
	}
	return nil
}
