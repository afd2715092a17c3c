package ociimage

import (
	"archive/tar"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestAddTree(t *testing.T) {
	dir := t.TempDir()
	mustWrite := func(p, data string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite("usr/bin/python3.11", "#!python\n", 0o755)
	mustWrite("usr/lib/x86_64-linux-gnu/libz.so.1.2.13", "elf", 0o644)
	for link, target := range map[string]string{
		"usr/bin/python3":                    "python3.11",
		"usr/lib/x86_64-linux-gnu/libz.so.1": "libz.so.1.2.13",
		"lib64/ld-linux-x86-64.so.2":         "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "spool"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "spool"), os.ModeSticky|0o730); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "usr/bin/python3.11"), filepath.Join(dir, "usr/bin/python3.11-hard")); err != nil {
		t.Fatal(err)
	}

	img := Image{Ref: "localhost/tree:v1"}
	if err := img.AddTree(dir, "/"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "tree.tar")
	if _, err := Write(context.Background(), img, out); err != nil {
		t.Fatal(err)
	}
	a, err := Read(out)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]LayerEntry{}
	for _, e := range a.Layer {
		byPath[e.Path()] = e
	}
	for p, want := range map[string]struct {
		typ  byte
		mode int64
		data string
		link string
	}{
		"/usr/bin/python3.11":                      {typ: tar.TypeReg, mode: 0o755, data: "#!python\n"},
		"/usr/bin/python3.11-hard":                 {typ: tar.TypeReg, mode: 0o755, data: "#!python\n"},
		"/usr/lib/x86_64-linux-gnu/libz.so.1.2.13": {typ: tar.TypeReg, mode: 0o644, data: "elf"},
		"/usr/bin/python3":                         {typ: tar.TypeSymlink, mode: 0o777, link: "python3.11"},
		"/usr/lib/x86_64-linux-gnu/libz.so.1":      {typ: tar.TypeSymlink, mode: 0o777, link: "libz.so.1.2.13"},
		"/lib64/ld-linux-x86-64.so.2":              {typ: tar.TypeSymlink, mode: 0o777, link: "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"},
		"/spool":                                   {typ: tar.TypeDir, mode: 0o1730},
		"/usr/bin":                                 {typ: tar.TypeDir, mode: 0o755},
	} {
		e, ok := byPath[p]
		if !ok {
			t.Errorf("%s is not in the layer", p)
			continue
		}
		if e.Header.Typeflag != want.typ || e.Header.Mode != want.mode || string(e.Data) != want.data || e.Header.Linkname != want.link {
			t.Errorf("%s: type %c mode %o data %q link %q; want %c %o %q %q", p, e.Header.Typeflag, e.Header.Mode, e.Data, e.Header.Linkname,
				want.typ, want.mode, want.data, want.link)
		}
	}
	if e, err := a.Resolve("/usr/bin/python3"); err != nil || string(e.Data) != "#!python\n" {
		t.Errorf("/usr/bin/python3 resolves to %v, %v", e.Header, err)
	}

	// Below another directory of the image.
	sub := Image{Ref: "localhost/tree:v2"}
	if err := sub.AddTree(filepath.Join(dir, "usr", "bin"), "/opt/app"); err != nil {
		t.Fatal(err)
	}
	if e, ok := sub.entries["/opt/app/python3"]; !ok || e.target != "python3.11" {
		t.Errorf("/opt/app/python3 = %+v", e)
	}
}

func TestAddTreeRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	img := Image{Ref: "localhost/tree:v1"}
	if err := img.AddTree(dir, "/"); err == nil || !strings.Contains(err.Error(), "fifo") {
		t.Errorf("AddTree() = %v, want an error naming the FIFO", err)
	}
}
