package image

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestBusybox(t *testing.T) {
	const host = "/bin/busybox"
	want, err := os.ReadFile(host)
	if err != nil {
		t.Skipf("no busybox on this host (Debian: apt-get install busybox-static): %v", err)
	}
	img, err := Busybox("localhost/accelstack/busybox:dev", host)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "busybox.tar")
	if _, err := Write(context.Background(), img, out); err != nil {
		t.Fatal(err)
	}
	l := readLayout(t, out)
	if got := l.config.Config.Entrypoint; !slices.Equal(got, []string{"/bin/sh"}) {
		t.Errorf("entrypoint = %q, want [/bin/sh]", got)
	}
	if !slices.Contains(l.config.Config.Env, busyboxPATH) {
		t.Errorf("env = %q, want %q", l.config.Config.Env, busyboxPATH)
	}
	if bb := l.byPath["/bin/busybox"]; bb.hdr == nil || bb.hdr.Mode&0o111 == 0 || !bytes.Equal(bb.data, want) {
		t.Fatal("/bin/busybox is not an executable copy of the host's")
	}
	for _, applet := range []string{"sh", "ls", "cat", "sleep", "wget"} {
		e, ok := l.byPath["/bin/"+applet]
		if !ok || e.hdr.Typeflag != tar.TypeSymlink || e.hdr.Linkname != "busybox" {
			t.Errorf("/bin/%s: present %v, want a symlink to busybox", applet, ok)
		}
	}
	if _, ok := l.byPath["/bin/busybox"]; !ok || l.byPath["/bin/busybox"].hdr.Typeflag != tar.TypeReg {
		t.Error("/bin/busybox was replaced by an applet link")
	}
}
