// Command images builds the OCI image archive of each accelstack binary, as
// package images defines it, from the built binaries and this machine's
// programs (`make images`), and prints each image's reference, version,
// digest and size. With --layer it writes one image's root file system as a
// tar to standard output instead: that is how each cmd/<binary>/Dockerfile
// lays out the same files.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/accelstack/accelstack/internal/images"
	"github.com/accelstack/accelstack/internal/ociimage"
	"github.com/accelstack/accelstack/pkg/cli"
)

func main() {
	fs := cli.NewFlagSet("images", "the OCI image archives of the accelstack binaries: images [flags] [binary...]")
	binDir := fs.String("bin-dir", "bin", "Directory of the built accelstack binaries (make build).")
	outDir := fs.String("out-dir", "bin/images", "Directory the archives are written to, <binary>.tar each.")
	registry := fs.String("registry", images.Registry, "Registry and path of the image references.")
	tag := fs.String("tag", images.Tag, "Tag of the image references.")
	layer := fs.String("layer", "", "Write the root file system of this binary's image as a tar to standard output; build no archive.")
	tools := toolFlag{}
	fs.Var(tools, "tool", "A Go tool's executable as name=path, e.g. rclone=bin/rclone; repeat for each tool.")
	cli.Main(fs, func(ctx context.Context) error {
		src := images.Sources{BinDir: *binDir, Tools: tools}
		if *layer != "" {
			return writeLayer(ctx, *layer, src)
		}
		defs, err := lookup(fs.Args())
		if err != nil {
			return err
		}
		return build(ctx, defs, src, *outDir, *registry, *tag, os.Stdout)
	})
}

// writeLayer writes the root file system of binary's image to standard
// output.
func writeLayer(ctx context.Context, binary string, src images.Sources) error {
	d, err := images.Lookup(binary)
	if err != nil {
		return err
	}
	img, err := d.Image(images.Ref(images.Registry, binary, images.Tag), src)
	if err != nil {
		return err
	}
	return ociimage.WriteLayer(ctx, img, os.Stdout)
}

// lookup returns the definitions of binaries, or all of them when none is
// named.
func lookup(binaries []string) ([]images.Definition, error) {
	if len(binaries) == 0 {
		return images.Definitions, nil
	}
	defs := make([]images.Definition, 0, len(binaries))
	for _, b := range binaries {
		d, err := images.Lookup(b)
		if err != nil {
			return nil, err
		}
		defs = append(defs, d)
	}
	return defs, nil
}

// toolFlag collects --tool name=path flags.
type toolFlag map[string]string

func (t toolFlag) String() string {
	var s []string
	for name, path := range t {
		s = append(s, name+"="+path)
	}
	return strings.Join(s, ",")
}

func (t toolFlag) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("want name=path, got %q", v)
	}
	t[name] = path
	return nil
}
