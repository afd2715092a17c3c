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

// kubeVersionLine matches what a Kubernetes component, the scheduler, prints
// with --version (k8s.io/component-base/version/verflag): "Kubernetes", then
// the version it is stamped with. With --version=raw it prints the whole
// version.Info, whose GitVersion and GitCommit kubeRawField matches.
var (
	kubeVersionLine = regexp.MustCompile(`^Kubernetes (\S+)\n?$`)
	kubeRawField    = regexp.MustCompile(`\b(GitVersion|GitCommit):"([^"]*)"`)
)

// binaryVersion runs the binary at path with --version and returns the
// version and commit it was stamped with. Of a Kubernetes component they
// are the Kubernetes version it is built on and the commit of this
// checkout, from --version=raw.
func binaryVersion(ctx context.Context, path string) (buildInfo, error) {
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return buildInfo{}, fmt.Errorf("%s --version: %w", path, err)
	}
	if m := kubeVersionLine.FindStringSubmatch(string(out)); m != nil {
		return kubeBinaryVersion(ctx, path, m[1])
	}
	m := versionLine.FindStringSubmatch(string(out))
	if m == nil || m[1] != filepath.Base(path) {
		return buildInfo{}, fmt.Errorf("%s --version printed %q, want %q (or Kubernetes) followed by its version", path, out, filepath.Base(path))
	}
	return buildInfo{version: m[2], commit: m[3]}, nil
}

// kubeBinaryVersion returns the version and commit that the Kubernetes
// component at path prints with --version=raw; version is what it printed
// with --version.
func kubeBinaryVersion(ctx context.Context, path, version string) (buildInfo, error) {
	out, err := exec.CommandContext(ctx, path, "--version=raw").Output()
	if err != nil {
		return buildInfo{}, fmt.Errorf("%s --version=raw: %w", path, err)
	}
	fields := map[string]string{}
	for _, m := range kubeRawField.FindAllStringSubmatch(string(out), -1) {
		fields[m[1]] = m[2]
	}
	if fields["GitVersion"] != version || fields["GitCommit"] == "" {
		return buildInfo{}, fmt.Errorf("%s --version=raw printed %q, want the GitVersion %s of --version and a GitCommit", path, out, version)
	}
	return buildInfo{version: version, commit: fields["GitCommit"]}, nil
}
