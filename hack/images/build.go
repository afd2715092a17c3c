package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"text/tabwriter"

	"github.com/accelstack/accelstack/internal/images"
	"github.com/accelstack/accelstack/internal/ociimage"
)

// build writes the archive of each definition's image into outDir, labelled
// with the version its binary reports, and prints a table of them to w.
func build(ctx context.Context, defs []images.Definition, src images.Sources, outDir, registry, tag string, w io.Writer) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "IMAGE\tVERSION\tDIGEST\tSIZE\tARCHIVE")
	for _, d := range defs {
		v, err := binaryVersion(ctx, filepath.Join(src.BinDir, d.Binary))
		if err != nil {
			return err
		}
		img, err := d.Image(images.Ref(registry, d.Binary, tag), src)
		if err != nil {
			return err
		}
		img.Labels = images.Labels(v.version, v.commit)
		path := filepath.Join(outDir, d.Binary+".tar")
		digest, err := ociimage.Write(ctx, img, path)
		if err != nil {
			return err
		}
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f MiB\t%s\n", img.Ref, v.version, digest, float64(fi.Size())/(1<<20), path)
	}
	return tw.Flush()
}

// buildInfo is the version and commit a binary was stamped with.
type buildInfo struct {
	version, commit string
}

// versionLine matches what --version prints: the binary's name, then
// version.Info.String().
var versionLine = regexp.MustCompile(`^(\S+) (\S+) \(commit ([^,]+),`)

// binaryVersion runs the binary at path with --version and returns the
// version and commit it was stamped with.
func binaryVersion(ctx context.Context, path string) (buildInfo, error) {
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return buildInfo{}, fmt.Errorf("%s --version: %w", path, err)
	}
	m := versionLine.FindStringSubmatch(string(out))
	if m == nil || m[1] != filepath.Base(path) {
		return buildInfo{}, fmt.Errorf("%s --version printed %q, want %q followed by its version", path, out, filepath.Base(path))
	}
	return buildInfo{version: m[2], commit: m[3]}, nil
}
