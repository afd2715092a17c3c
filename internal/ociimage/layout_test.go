package ociimage

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// checkedLayout is a layout tarball read back and checked for consistency.
type checkedLayout struct {
	layout
	byPath map[string]LayerEntry // by absolute image path
}

// readLayout opens the layout tarball at p and checks the chain of digests
// from index.json down to the layer.
func readLayout(t *testing.T, p string) checkedLayout {
	t.Helper()
	l, err := read(p)
	if err != nil {
		t.Fatal(err)
	}
	c := checkedLayout{layout: l, byPath: make(map[string]LayerEntry)}
	for _, e := range l.layer {
		c.byPath[e.Path()] = e
	}
	return c
}

// resolve is Archive.Resolve that fails the test on an error.
func (l checkedLayout) resolve(t *testing.T, p string) LayerEntry {
	t.Helper()
	e, err := (&Archive{Layer: l.layer}).Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestWrite(t *testing.T) {
	hostDir := t.TempDir()
	hostFile := filepath.Join(hostDir, "config.yaml")
	if err := os.WriteFile(hostFile, []byte("key: value\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(hostFile, 0o640); err != nil { // whatever the umask
		t.Fatal(err)
	}

	img := Image{
		Ref:        "localhost/accelstack/test:dev",
		Entrypoint: []string{"/usr/bin/ls"},
		Cmd:        []string{"-l"},
		Env:        []string{"PATH=/usr/bin", "A=b"},
		WorkingDir: "/work",
		User:       "65532:65532",
	}
	img.AddFile(hostFile, "/etc/app/config.yaml")
	img.AddFileMode(hostFile, "/etc/app/secret.yaml", 0o600)
	img.AddData("opt/app/run.sh", []byte("#!/bin/sh\n"), 0o755)
	img.AddDir("/data", 0o700)
	img.AddDir("/scratch", 0o1777)
	img.AddDir("/setuid", fs.ModeSetuid|0o755)
	img.AddDir("/sticky", fs.ModeSticky|0o777)
	img.AddSymlink("/usr/local/bin/list", "../../bin/ls")
	if err := img.AddExecutable("/bin/ls", "/usr/bin/ls"); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "test.tar")
	digest, err := Write(context.Background(), img, out)
	if err != nil {
		t.Fatal(err)
	}
	l := readLayout(t, out)

	md := l.index.Manifests[0]
	if md.Digest != digest {
		t.Errorf("Write() = %s, index says %s", digest, md.Digest)
	}
	if recorded, err := os.ReadFile(out + ".digest"); err != nil || string(recorded) != digest+"  "+img.Ref+"\n" {
		t.Errorf("%s.digest = %q, %v; want %q", out, recorded, err, digest+"  "+img.Ref+"\n")
	}
	wantAnn := map[string]string{
		"io.containerd.image.name":          "localhost/accelstack/test:dev",
		"org.opencontainers.image.ref.name": "dev",
	}
	for k, v := range wantAnn {
		if md.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, md.Annotations[k], v)
		}
	}
	if md.Platform == nil || md.Platform.OS != "linux" || md.Platform.Architecture == "" {
		t.Errorf("index platform = %+v", md.Platform)
	}
	c := l.config
	if c.OS != "linux" || c.Architecture != md.Platform.Architecture {
		t.Errorf("config os/arch = %s/%s", c.OS, c.Architecture)
	}
	if !slices.Equal(c.Config.Entrypoint, img.Entrypoint) || !slices.Equal(c.Config.Cmd, img.Cmd) ||
		!slices.Equal(c.Config.Env, img.Env) || c.Config.WorkingDir != "/work" || c.Config.User != "65532:65532" {
		t.Errorf("config.config = %+v, want that of %+v", c.Config, img)
	}

	// Layer: sorted, owned by root, mtime 0, every parent present before
	// its children.
	seen := map[string]bool{"/": true}
	for i, e := range l.layer {
		p := cleanPath(e.Header.Name)
		if i > 0 && cleanPath(l.layer[i-1].Header.Name) >= p {
			t.Errorf("entry %s follows %s: not sorted", p, l.layer[i-1].Header.Name)
		}
		if e.Header.Uid != 0 || e.Header.Gid != 0 || !e.Header.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("entry %s: uid %d gid %d mtime %v, want 0 0 epoch", p, e.Header.Uid, e.Header.Gid, e.Header.ModTime)
		}
		if !seen[path.Dir(p)] {
			t.Errorf("entry %s comes before its parent directory", p)
		}
		if e.Header.Typeflag == tar.TypeDir {
			seen[p] = true
		}
	}

	ls, err := os.ReadFile("/bin/ls")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path     string
		typeflag byte
		mode     int64
		data     string // or link target
	}{
		{"/etc/app/config.yaml", tar.TypeReg, 0o640, "key: value\n"},
		{"/etc/app/secret.yaml", tar.TypeReg, 0o600, "key: value\n"},
		{"/etc/app", tar.TypeDir, 0o755, ""},
		{"/opt/app/run.sh", tar.TypeReg, 0o755, "#!/bin/sh\n"},
		{"/opt", tar.TypeDir, 0o755, ""},
		{"/data", tar.TypeDir, 0o700, ""},
		{"/scratch", tar.TypeDir, 0o1777, ""},
		{"/setuid", tar.TypeDir, 0o4755, ""},
		{"/sticky", tar.TypeDir, 0o1777, ""},
		{"/tmp", tar.TypeDir, 0o1777, ""},
		{"/usr/local/bin/list", tar.TypeSymlink, 0o777, "../../bin/ls"},
		{"/usr/bin/ls", tar.TypeReg, 0o755, string(ls)},
		{"/etc/passwd", tar.TypeReg, 0o644, defaultPasswd},
		{"/etc/group", tar.TypeReg, 0o644, defaultGroup},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			e, ok := l.byPath[tt.path]
			if !ok {
				t.Fatalf("%s is not in the layer", tt.path)
			}
			got := string(e.Data)
			if tt.typeflag == tar.TypeSymlink {
				got = e.Header.Linkname
			}
			if e.Header.Typeflag != tt.typeflag || e.Header.Mode != tt.mode || got != tt.data {
				t.Errorf("%s: type %c mode %o data %.40q; want type %c mode %o data %.40q",
					tt.path, e.Header.Typeflag, e.Header.Mode, got, tt.typeflag, tt.mode, tt.data)
			}
		})
	}
	if !strings.Contains(defaultPasswd, "nonroot:x:65532:65532:") || !strings.Contains(defaultGroup, "nonroot:x:65532:") {
		t.Errorf("default passwd/group lack nonroot 65532")
	}

	// The interpreter (from the ELF header) and every library ldd names
	// resolve, through the layer's own symlinks, to a copy of the host file.
	f, err := elf.Open("/bin/ls")
	if err != nil {
		t.Fatal(err)
	}
	var interp string
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			b, _ := io.ReadAll(prog.Open())
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	f.Close()
	if interp == "" {
		t.Fatal("/bin/ls has no interpreter; the test needs a dynamic executable")
	}
	lddOut, err := exec.Command("ldd", "/bin/ls").Output()
	if err != nil {
		t.Fatal(err)
	}
	libs := []string{interp}
	for _, m := range regexp.MustCompile(`=> (/\S+)`).FindAllStringSubmatch(string(lddOut), -1) {
		libs = append(libs, m[1])
	}
	if !slices.ContainsFunc(libs, func(p string) bool { return path.Base(p) == "libc.so.6" }) {
		t.Fatalf("ldd /bin/ls names no libc.so.6:\n%s", lddOut)
	}
	for _, lib := range libs {
		want, err := os.ReadFile(lib)
		if err != nil {
			t.Fatal(err)
		}
		e := l.resolve(t, lib)
		if e.Header.Typeflag != tar.TypeReg || !bytes.Equal(e.Data, want) {
			t.Errorf("%s resolves in the layer to %s (type %c, %d bytes), want a copy of the host file (%d bytes)",
				lib, e.Header.Name, e.Header.Typeflag, len(e.Data), len(want))
		}
	}
}

func TestWriteDefaultsOverridden(t *testing.T) {
	img := Image{Ref: "localhost/own:1"}
	img.AddData("/etc/passwd", []byte("root:x:0:0::/:/bin/sh\n"), 0o644)
	img.AddDir("/tmp", 0o700)
	out := filepath.Join(t.TempDir(), "own.tar")
	if _, err := Write(context.Background(), img, out); err != nil {
		t.Fatal(err)
	}
	l := readLayout(t, out)
	if got := string(l.byPath["/etc/passwd"].Data); got != "root:x:0:0::/:/bin/sh\n" {
		t.Errorf("/etc/passwd = %q, want the image's own", got)
	}
	if got := string(l.byPath["/etc/group"].Data); got != defaultGroup {
		t.Errorf("/etc/group = %q, want the default", got)
	}
	if got := l.byPath["/tmp"].Header.Mode; got != 0o700 {
		t.Errorf("/tmp mode = %o, want the image's own 700", got)
	}
}

func TestWriteSkipsUnchanged(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	out := filepath.Join(dir, "img.tar")
	img := Image{Ref: "localhost/cache:v1", Entrypoint: []string{"/x"}}
	img.AddData("/x", []byte("one"), 0o755)

	d1, err := Write(ctx, img, out)
	if err != nil {
		t.Fatal(err)
	}
	fi1, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name        string
		change      func(img *Image)
		prepare     func(t *testing.T)
		wantRewrite bool
		newDigest   bool
	}{
		{name: "same content", change: func(*Image) {}},
		{name: "same content rebuilt from scratch", change: func(img *Image) {
			*img = Image{Ref: "localhost/cache:v1", Entrypoint: []string{"/x"}}
			img.AddData("/x", []byte("one"), 0o755)
		}},
		{name: "file content", change: func(img *Image) { img.AddData("/x", []byte("two"), 0o755) }, wantRewrite: true, newDigest: true},
		{name: "file mode", change: func(img *Image) { img.AddData("/x", []byte("one"), 0o700) }, wantRewrite: true, newDigest: true},
		{name: "config", change: func(img *Image) { img.User = "1:1" }, wantRewrite: true, newDigest: true},
		// The reference lives in index.json, outside the manifest.
		{name: "reference", change: func(img *Image) { img.Ref = "localhost/cache:v2" }, wantRewrite: true},
		{
			name:        "digest record lost",
			change:      func(*Image) {},
			prepare:     func(t *testing.T) { os.Remove(out + ".digest") },
			wantRewrite: true,
		},
		{
			name:        "tarball lost",
			change:      func(*Image) {},
			prepare:     func(t *testing.T) { os.Remove(out) },
			wantRewrite: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Start each case from the original image and tarball.
			if _, err := Write(ctx, img, out); err != nil {
				t.Fatal(err)
			}
			before, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			if tt.prepare != nil {
				tt.prepare(t)
			}
			changed := img.Clone()
			tt.change(&changed)
			d2, err := Write(ctx, changed, out)
			if err != nil {
				t.Fatal(err)
			}
			after, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			rewritten := !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime())
			if rewritten != tt.wantRewrite {
				t.Errorf("rewritten = %v, want %v", rewritten, tt.wantRewrite)
			}
			if (d2 != d1) != tt.newDigest {
				t.Errorf("digest %s after change, %s before; want a new one: %v", d2, d1, tt.newDigest)
			}
			l := readLayout(t, out)
			if got := l.index.Manifests[0]; got.Digest != d2 || got.Annotations[annotationImageName] != changed.Ref {
				t.Errorf("tarball holds %s %s, Write returned %s for %s", got.Digest, got.Annotations[annotationImageName], d2, changed.Ref)
			}
		})
	}
	if !fi1.Mode().IsRegular() || fi1.Mode().Perm() != 0o644 {
		t.Errorf("tarball mode = %v, want -rw-r--r--", fi1.Mode())
	}
	left, err := filepath.Glob(filepath.Join(dir, ".*"))
	if err != nil || len(left) != 0 {
		t.Errorf("temporary files left behind: %v %v", left, err)
	}
}

func TestWriteErrors(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		image func() Image
	}{
		{name: "no tag", image: func() Image { return Image{Ref: "localhost/x"} }},
		{name: "empty tag", image: func() Image { return Image{Ref: "localhost:5000/x:"} }},
		{name: "port but no tag", image: func() Image { return Image{Ref: "localhost:5000/x"} }},
		{name: "digest reference", image: func() Image { return Image{Ref: "localhost/x@sha256:00"} }},
		{name: "parent is a symlink", image: func() Image {
			img := Image{Ref: "localhost/x:1"}
			img.AddSymlink("/lib", "usr/lib")
			img.AddData("/lib/libx.so", nil, 0o644)
			return img
		}},
		{name: "parent is a file", image: func() Image {
			img := Image{Ref: "localhost/x:1"}
			img.AddData("/a", nil, 0o644)
			img.AddData("/a/b", nil, 0o644)
			return img
		}},
		{name: "missing host file", image: func() Image {
			img := Image{Ref: "localhost/x:1"}
			img.AddFile("/nonexistent/file", "/f")
			return img
		}},
		{name: "host path is a directory", image: func() Image {
			img := Image{Ref: "localhost/x:1"}
			img.AddFile(os.TempDir(), "/f")
			return img
		}},
		{name: "cancelled", ctx: cancelled, image: func() Image { return Image{Ref: "localhost/x:1"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			dir := t.TempDir()
			out := filepath.Join(dir, "x.tar")
			if _, err := Write(ctx, tt.image(), out); err == nil {
				t.Fatal("Write() succeeded, want an error")
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("failed Write left %v", left)
			}
		})
	}
}

func TestTag(t *testing.T) {
	tests := []struct {
		ref, want string
	}{
		{"localhost/accelstack/csi-s3:dev", "dev"},
		{"registry.k8s.io/pause:3.9", "3.9"},
		{"localhost:5000/busybox:1.36", "1.36"},
		{"pause:latest", "latest"},
	}
	for _, tt := range tests {
		got, err := tag(tt.ref)
		if err != nil || got != tt.want {
			t.Errorf("tag(%q) = %q, %v; want %q", tt.ref, got, err, tt.want)
		}
	}
}
