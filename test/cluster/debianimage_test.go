package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseAlternatives(t *testing.T) {
	script := `#!/bin/sh
set -e

update-alternatives --install /usr/lib/x86_64-linux-gnu/libblas.so.3 \
                    libblas.so.3-x86_64-linux-gnu \
	            /usr/lib/x86_64-linux-gnu/blas/libblas.so.3 10

if [ "$1" = "configure" ] ; then
	update-alternatives --install /usr/bin/futurize futurize /usr/bin/python3-futurize 300
	update-alternatives --install "/usr/bin/editor" editor '/bin/nano' 40 --slave /usr/share/man/man1/editor.1.gz editor.1.gz /usr/share/man/man1/nano.1.gz
	update-alternatives --install /usr/lib/$DEB_HOST_MULTIARCH/libx.so x /usr/lib/$DEB_HOST_MULTIARCH/x/libx.so 5
	update-alternatives --install /etc/mysql/my.cnf my.cnf "/etc/mysql/mariadb.cnf" 500 || true
	update-alternatives --remove futurize /usr/bin/python2-futurize
	update-alternatives --install /usr/bin/short short
fi
`
	got := parseAlternatives(script)
	want := []alternative{
		{link: "/usr/lib/x86_64-linux-gnu/libblas.so.3", path: "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", priority: 10},
		{link: "/usr/bin/futurize", path: "/usr/bin/python3-futurize", priority: 300},
		{link: "/usr/bin/editor", path: "/bin/nano", priority: 40},
		{link: "/usr/share/man/man1/editor.1.gz", path: "/usr/share/man/man1/nano.1.gz", priority: 40},
		{link: "/etc/mysql/my.cnf", path: "/etc/mysql/mariadb.cnf", priority: 500},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestLinkAlternatives(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"usr/lib/blas/libblas.so.3", "usr/lib/openblas/libblas.so.3", "usr/bin/vim", "usr/bin/shipped"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("shipped", filepath.Join(root, "usr/bin/editor")); err != nil {
		t.Fatal(err)
	}
	err := linkAlternatives(root, []alternative{
		{link: "/usr/lib/libblas.so.3", path: "/usr/lib/blas/libblas.so.3", priority: 10},
		{link: "/usr/lib/libblas.so.3", path: "/usr/lib/openblas/libblas.so.3", priority: 100},
		// The highest priority, but not in the image.
		{link: "/usr/lib/libblas.so.3", path: "/usr/lib/atlas/libblas.so.3", priority: 1000},
		{link: "/usr/bin/editor", path: "/usr/bin/vim", priority: 50},
		{link: "/usr/bin/nothing", path: "/usr/bin/absent", priority: 50},
		{link: "/etc/alternatives-only/vi", path: "/usr/bin/vim", priority: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	for link, want := range map[string]string{
		"usr/lib/libblas.so.3":     "/usr/lib/openblas/libblas.so.3",
		"usr/bin/editor":           "shipped",
		"etc/alternatives-only/vi": "/usr/bin/vim",
	} {
		if got, err := os.Readlink(filepath.Join(root, link)); err != nil || got != want {
			t.Errorf("%s -> %q (%v), want %q", link, got, err, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "usr/bin/nothing")); err == nil {
		t.Error("a link to a missing alternative was made")
	}
}

func TestTrimRootfs(t *testing.T) {
	root := t.TempDir()
	files := []string{
		"usr/share/doc/libc6/copyright", "usr/share/doc/libc6/changelog.Debian.gz", "usr/share/doc/libc6/examples/x.c",
		"usr/share/man/man1/python3.1.gz", "usr/share/locale/de/LC_MESSAGES/libc.mo", "usr/share/lintian/overrides/libc6",
		"usr/share/zoneinfo/UTC", "usr/lib/python3/dist-packages/torch/__init__.py", "usr/share/doc-base/x",
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Library packages often point their documentation at another's.
	if err := os.Symlink("libc6", filepath.Join(root, "usr/share/doc/libc6-dev")); err != nil {
		t.Fatal(err)
	}
	if err := trimRootfs(root); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		_, err := os.Lstat(filepath.Join(root, f))
		kept := err == nil
		want := f == "usr/share/doc/libc6/copyright" || f == "usr/share/zoneinfo/UTC" || f == "usr/lib/python3/dist-packages/torch/__init__.py"
		if kept != want {
			t.Errorf("%s kept %v, want %v", f, kept, want)
		}
	}
	if _, err := os.Readlink(filepath.Join(root, "usr/share/doc/libc6-dev")); err != nil {
		t.Errorf("the documentation link went: %v", err)
	}
	if err := trimRootfs(t.TempDir()); err != nil {
		t.Errorf("trimming an empty root: %v", err)
	}
}

func TestPackagesRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.tar.packages")
	rec := packagesRecord{inputs: "abc", key: "def", packages: []string{"libc6=2.36-9:amd64", "python3=3.11.2-1:amd64"}}
	if err := rec.write(path); err != nil {
		t.Fatal(err)
	}
	got, err := readPackagesRecord(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.inputs != rec.inputs || got.key != rec.key || !slices.Equal(got.packages, rec.packages) {
		t.Errorf("read back %+v, want %+v", got, rec)
	}
	if err := os.WriteFile(path, []byte("something else\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readPackagesRecord(path); err == nil {
		t.Error("a file that is no record was read as one")
	}
}

// TestWriteFilesModes: a file of an image is 0644, a program (#!) 0755,
// and a path that is not clean and absolute is refused.
func TestWriteFilesModes(t *testing.T) {
	root := t.TempDir()
	img := DebianImage{Files: map[string]string{"/etc/passwd": "root:x:0:0::/:/bin/sh\n", "/usr/bin/tool": "#!/bin/sh\nexit 0\n"}}
	if err := img.writeFiles(root); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{"/etc/passwd": 0o644, "/usr/bin/tool": 0o755} {
		st, err := os.Stat(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, st.Mode().Perm(), want)
		}
	}
	if err := (DebianImage{Files: map[string]string{"/usr/../etc/x": ""}}).writeFiles(root); err == nil {
		t.Error("an unclean path was written")
	}
}
