package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/accelstack/accelstack/internal/images"
	"github.com/accelstack/accelstack/internal/ociimage"
	"github.com/accelstack/accelstack/test/harness"
)

// ImageTag is the tag of the images built from this checkout.
const ImageTag = "local"

// Image returns the local image reference of an accelstack binary, e.g.
// localhost/accelstack/csi-s3:local.
func Image(name string) string { return "localhost/accelstack/" + name + ":" + ImageTag }

// tools are the pinned tools from the tool cache that get an image each:
// versitygw, the demo's S3 endpoint, and csi-provisioner, the csi-s3
// controller's sidecar.
var tools = []string{"versitygw", "csi-provisioner"}

// buildImages builds the pause and busybox images, one image per accelstack
// binary as package images defines it (named Image(binary)), and one per
// tool. It returns the tarball paths; unchanged images are not rewritten.
func (c *Cluster) buildImages(ctx context.Context) ([]string, error) {
	binDir := filepath.Join(c.opts.ImageDir, "bin")
	pause, err := buildPause(ctx, c.root, binDir)
	if err != nil {
		return nil, err
	}
	if err := c.buildBinaries(ctx, binDir); err != nil {
		return nil, err
	}
	imgs := []ociimage.Image{pauseImage(PauseImage, pause)}
	busybox, err := busyboxImage(BusyboxImage, "/bin/busybox")
	if err != nil {
		return nil, err
	}
	imgs = append(imgs, busybox)
	src := images.Sources{BinDir: binDir, Tools: map[string]string{}}
	for _, d := range images.Definitions {
		for _, name := range d.Tools() {
			if src.Tools[name], err = harness.Tool(name); err != nil {
				return nil, err
			}
		}
		img, err := d.Image(Image(d.Binary), src)
		if err != nil {
			return nil, err
		}
		imgs = append(imgs, img)
	}
	for _, name := range tools {
		bin, err := harness.Tool(name)
		if err != nil {
			return nil, err
		}
		img := ociimage.Image{Ref: Image(name), Entrypoint: []string{"/usr/bin/" + name}}
		if err := img.AddExecutable(bin, "/usr/bin/"+name); err != nil {
			return nil, err
		}
		imgs = append(imgs, img)
	}

	var paths []string
	for _, img := range imgs {
		name := strings.NewReplacer("/", "_", ":", "_").Replace(strings.TrimPrefix(img.Ref, "localhost/"))
		path := filepath.Join(c.opts.ImageDir, name+".tar")
		if _, err := ociimage.Write(ctx, img, path); err != nil {
			return nil, fmt.Errorf("writing %s: %w", img.Ref, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// buildBinaries builds the accelstack commands into dir, version stamped
// like `make build`.
func (c *Cluster) buildBinaries(ctx context.Context, dir string) error {
	pkgs := make([]string, len(images.Definitions))
	for i, d := range images.Definitions {
		pkgs[i] = "./cmd/" + d.Binary
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
