package cluster

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/accelstack/accelstack/internal/ociimage"
)

func TestBusybox(t *testing.T) {
	const host = "/bin/busybox"
	want, err := os.ReadFile(host)
	if err != nil {
		t.Skipf("no busybox on this host (Debian: apt-get install busybox-static): %v", err)
	}
	img, err := busyboxImage("localhost/accelstack/busybox:dev", host)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "busybox.tar")
	if _, err := ociimage.Write(context.Background(), img, out); err != nil {
		t.Fatal(err)
	}
	a, byPath := readImage(t, out)
	if got := a.Entrypoint; !slices.Equal(got, []string{"/bin/sh"}) {
		t.Errorf("entrypoint = %q, want [/bin/sh]", got)
	}
	if !slices.Contains(a.Env, busyboxPATH) {
		t.Errorf("env = %q, want %q", a.Env, busyboxPATH)
	}
	if bb := byPath["/bin/busybox"]; bb.Header == nil || bb.Header.Mode&0o111 == 0 || !bytes.Equal(bb.Data, want) {
		t.Fatal("/bin/busybox is not an executable copy of the host's")
	}
	for _, applet := range []string{"sh", "ls", "cat", "sleep", "wget"} {
		e, ok := byPath["/bin/"+applet]
		if !ok || e.Header.Typeflag != tar.TypeSymlink || e.Header.Linkname != "busybox" {
			t.Errorf("/bin/%s: present %v, want a symlink to busybox", applet, ok)
		}
	}
	if _, ok := byPath["/bin/busybox"]; !ok || byPath["/bin/busybox"].Header.Typeflag != tar.TypeReg {
		t.Error("/bin/busybox was replaced by an applet link")
	}
}
