package cluster

import (
	"context"
	"fmt"
	"os"
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
// versitygw, the demo's S3 endpoint, csi-provisioner, the csi-s3
// controller's sidecar, and Ory Hydra, the login's identity provider.
var tools = []string{"versitygw", "csi-provisioner", "hydra"}

// buildImages builds the pause and busybox images, one image per accelstack
// binary as package images defines it (named Image(binary)), one per tool,
// and the workload images. It returns the tarball paths; unchanged images are not rewritten.
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
		path := filepath.Join(c.opts.ImageDir, archiveName(img.Ref))
		if _, err := ociimage.Write(ctx, img, path); err != nil {
			return nil, fmt.Errorf("writing %s: %w", img.Ref, err)
		}
		paths = append(paths, path)
	}
	workloads, err := c.buildWorkloadImages(ctx)
	if err != nil {
		return nil, err
	}
	return append(paths, workloads...), nil
}

// buildBinaries builds the accelstack commands, version stamped like
// `make build`, and the cluster's DNS server into dir. A command with a Go
// module of its own (cmd/<binary>/go.mod: the scheduler) is built in its
// module's directory, stamped like `make build-scheduler` with the
// Kubernetes version it is built on. They are linked without the symbol
// table and DWARF (-s -w): a third less to link, and smaller images to
// import; panics still name their functions.
func (c *Cluster) buildBinaries(ctx context.Context, dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	pkgs := []string{"./test/cmd/clusterdns"}
	var modules []string
	for _, d := range images.Definitions {
		if _, err := os.Stat(filepath.Join(c.root, "cmd", d.Binary, "go.mod")); err == nil {
			modules = append(modules, d.Binary)
			continue
		}
		pkgs = append(pkgs, "./cmd/"+d.Binary)
	}
	version, commit := "local", "unknown"
	if out, err := exec.CommandContext(ctx, "git", "-C", c.root, "describe", "--tags", "--always", "--dirty").Output(); err == nil {
		version = strings.TrimSpace(string(out))
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", c.root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-trimpath",
		"-ldflags", "-s -w -X github.com/accelstack/accelstack/pkg/version.gitVersion=" + version, "-o", dir + "/"}, pkgs...)...)
	cmd.Dir = c.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	for _, name := range modules {
		moduleDir := filepath.Join(c.root, "cmd", name)
		out, err := exec.CommandContext(ctx, "go", "-C", moduleDir, "list", "-m", "-f", "{{.Version}}", "k8s.io/kubernetes").Output()
		if err != nil {
			return fmt.Errorf("the k8s.io/kubernetes version of cmd/%s: %w", name, err)
		}
		kver := strings.TrimSpace(string(out))
		major, rest, _ := strings.Cut(strings.TrimPrefix(kver, "v"), ".")
		minor, _, _ := strings.Cut(rest, ".")
		const v = "k8s.io/component-base/version"
		ldflags := "-s -w -X " + v + ".gitVersion=" + kver + " -X " + v + ".gitMajor=" + major + " -X " + v + ".gitMinor=" + minor +
			" -X " + v + ".gitCommit=" + commit + " -X k8s.io/client-go/pkg/version.gitVersion=" + kver
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", filepath.Join(dir, name), ".")
		cmd.Dir = moduleDir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build cmd/%s: %w\n%s", name, err, out)
		}
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
