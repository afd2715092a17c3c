//go:build e2e

package cluster

import (
	"archive/tar"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accelstack/accelstack/internal/ociimage"
	"github.com/accelstack/accelstack/test/harness"
)

// TestDebianImageFromPackages builds a small image from real Debian
// packages through apt: the reference BLAS, whose maintainer script
// registers libblas.so.3 as an alternative, and its dependency closure.
func TestDebianImageFromPackages(t *testing.T) {
	ctx := context.Background()
	cache := debianCache{dir: filepath.Join(harness.CacheDir(), "debian")}
	img := DebianImage{Ref: "localhost/accelstack/blas:test", Packages: []string{"libblas3"}, Env: []string{workloadPATH}}
	path := filepath.Join(t.TempDir(), "blas.tar")
	built, err := buildDebianImage(ctx, cache, img, path)
	if err != nil {
		t.Fatal(err)
	}
	if !built {
		t.Error("the first build reported no build")
	}
	a, err := ociimage.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]ociimage.LayerEntry{}
	for _, e := range a.Layer {
		byPath[e.Path()] = e
		if p := e.Path(); strings.HasPrefix(p, "/usr/share/man/") || strings.HasSuffix(p, "changelog.Debian.gz") {
			t.Errorf("documentation in the image: %s", p)
		}
		if p := e.Path(); strings.HasPrefix(p, "/usr/bin/dpkg") || p == "/bin/tar" || p == "/bin/bash" {
			t.Errorf("an Essential package's file in the image: %s", p)
		}
	}
	link := byPath["/usr/lib/x86_64-linux-gnu/libblas.so.3"]
	if link.Header == nil || link.Header.Typeflag != tar.TypeSymlink || link.Header.Linkname != "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3" {
		t.Errorf("libblas.so.3 is %+v, want the alternative's link to blas/libblas.so.3", link.Header)
	}
	for _, p := range []string{"/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", "/usr/share/doc/libc6/copyright", "/lib64/ld-linux-x86-64.so.2"} {
		if _, err := a.Resolve(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if a.Labels[PackagesLabel] == "" || a.Ref != img.Ref {
		t.Errorf("ref %q labels %v", a.Ref, a.Labels)
	}
	rec, err := readPackagesRecord(path + packagesSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if rec.key != a.Labels[PackagesLabel] || !strings.Contains(strings.Join(rec.packages, " "), "libblas3=") {
		t.Errorf("record %+v does not match the image's label %s", rec, a.Labels[PackagesLabel])
	}

	if built, err := buildDebianImage(ctx, cache, img, path); err != nil || built {
		t.Errorf("building the same image again: built %v, %v", built, err)
	}
	// Changed inputs resolve again, and find the same packages.
	rec.inputs = "stale"
	if err := rec.write(path + packagesSuffix); err != nil {
		t.Fatal(err)
	}
	if built, err := buildDebianImage(ctx, cache, img, path); err != nil || built {
		t.Errorf("building after the lists changed: built %v, %v", built, err)
	}
	img.Env = append(img.Env, "LANG=C.UTF-8")
	if built, err := buildDebianImage(ctx, cache, img, path); err != nil || !built {
		t.Errorf("building another image: built %v, %v", built, err)
	}
}
