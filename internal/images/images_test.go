package images

import (
	"archive/tar"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/accelstack/accelstack/internal/ociimage"
	"github.com/accelstack/accelstack/test/harness"
)

// repoRoot returns the root of the checkout.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// require fails the test in CI, where every dependency is installed
// (.ci/run), and skips it elsewhere, unless ok.
func require(t *testing.T, ok bool, reason string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (required in CI)", reason)
	}
	t.Skipf("skipping: %s", reason)
}

func TestDefinitionsCoverCmd(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join(repoRoot(t), "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds, defined []string
	for _, d := range dirs {
		if d.IsDir() {
			cmds = append(cmds, d.Name())
		}
	}
	for _, d := range Definitions {
		defined = append(defined, d.Binary)
	}
	slices.Sort(defined)
	if !slices.Equal(cmds, defined) {
		t.Errorf("cmd/ holds %q, the image definitions are of %q", cmds, defined)
	}
}

// TestDebianPackages checks that each program the images copy from this
// machine comes from the Debian package that the Dockerfiles install for it.
func TestDebianPackages(t *testing.T) {
	dpkg, err := exec.LookPath("dpkg-query")
	require(t, err == nil, "dpkg-query is missing: not a Debian machine")
	var hostPaths []string
	for _, d := range Definitions {
		for _, p := range d.Programs {
			if p.Host != "" {
				hostPaths = append(hostPaths, p.Host)
			}
		}
	}
	out, err := exec.Command(dpkg, append([]string{"-S"}, hostPaths...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-query -S %s: %v: %s", strings.Join(hostPaths, " "), err, out)
	}
	owner := map[string]string{} // path -> package
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if pkgs, path, ok := strings.Cut(line, ": "); ok {
			owner[path] = pkgs
		}
	}
	for _, d := range Definitions {
		for _, p := range d.Programs {
			if p.Host != "" && owner[p.Host] != p.Package {
				t.Errorf("%s: %s comes from the Debian package %q, the definition says %s", d.Binary, p.Host, owner[p.Host], p.Package)
			}
		}
		for _, f := range d.Files {
			out, err := exec.Command(dpkg, "-W", "-f=${Status}", f.Package).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "install ok installed") {
				t.Errorf("%s: the Debian package %s of %s is not installed: %v %s", d.Binary, f.Package, f.Path, err, out)
			}
		}
	}
}

// fakeSources returns sources whose accelstack binaries and Go tools are
// copies of /bin/true, a small dynamic executable.
func fakeSources(t *testing.T) Sources {
	t.Helper()
	exe, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := Sources{BinDir: dir, Tools: map[string]string{}}
	for _, d := range Definitions {
		if err := os.WriteFile(filepath.Join(dir, d.Binary), exe, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, tool := range d.Tools() {
			src.Tools[tool] = filepath.Join(dir, "tool-"+tool)
			if err := os.WriteFile(src.Tools[tool], exe, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return src
}

// hostDependencies requires every Debian program and file of the
// definitions on this machine.
func hostDependencies(t *testing.T) {
	t.Helper()
	for _, d := range Definitions {
		for _, p := range d.Programs {
			if p.Host != "" {
				_, err := os.Stat(p.Host)
				require(t, err == nil, fmt.Sprintf("%s is missing (Debian package %s)", p.Host, p.Package))
			}
		}
		for _, f := range d.Files {
			_, err := os.Stat(f.Path)
			require(t, err == nil, fmt.Sprintf("%s is missing (Debian package %s)", f.Path, f.Package))
		}
	}
}

// lddPaths returns the paths ldd names for the executable at p: its
// libraries and its interpreter, as the loader looks them up.
func lddPaths(t *testing.T, p string) []string {
	t.Helper()
	out, err := exec.Command("ldd", p).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", p, err)
	}
	var paths []string
	for _, m := range regexp.MustCompile(`(?m)^\s*(?:\S+ => )?(/\S+) \(0x`).FindAllStringSubmatch(string(out), -1) {
		paths = append(paths, m[1])
	}
	if len(paths) == 0 {
		t.Fatalf("ldd %s names no library:\n%s", p, out)
	}
	return paths
}

func TestImageContents(t *testing.T) {
	hostDependencies(t)
	src := fakeSources(t)
	for _, d := range Definitions {
		t.Run(d.Binary, func(t *testing.T) {
			ref := Ref("registry.example.com/team", d.Binary, "v1")
			img, err := d.Image(ref, src)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), d.Binary+".tar")
			if _, err := ociimage.Write(context.Background(), img, out); err != nil {
				t.Fatal(err)
			}
			a, err := ociimage.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			if a.Ref != ref || !slices.Equal(a.Entrypoint, []string{"/usr/bin/" + d.Binary}) ||
				!slices.Equal(a.Env, []string{"PATH=" + Path}) || a.User != d.User {
				t.Errorf("config: ref %s entrypoint %q env %q user %q; want %s, [/usr/bin/%s], [PATH=%s], %q",
					a.Ref, a.Entrypoint, a.Env, a.User, ref, d.Binary, Path, d.User)
			}

			// Every regular file is the binary, a program, a file of the
			// definition, the default passwd and group, or a library that
			// one of the executables loads; and each of those is there.
			want := map[string]string{ // image path -> host path
				"/usr/bin/" + d.Binary: filepath.Join(src.BinDir, d.Binary),
				"/etc/passwd":          "",
				"/etc/group":           "",
			}
			executables := []string{filepath.Join(src.BinDir, d.Binary)}
			for _, p := range d.Programs {
				host := p.Host
				if p.Tool != "" {
					host = src.Tools[p.Tool]
				}
				want[p.Path] = host
				executables = append(executables, host)
			}
			for _, f := range d.Files {
				want[f.Path] = f.Path
			}
			var libs []string
			for _, exe := range executables {
				for _, lib := range lddPaths(t, exe) {
					resolved, err := filepath.EvalSymlinks(lib)
					if err != nil {
						t.Fatal(err)
					}
					want[resolved] = resolved
					libs = append(libs, lib)
				}
			}
			got := map[string]ociimage.LayerEntry{}
			links := map[string]string{}
			for _, e := range a.Layer {
				switch e.Header.Typeflag {
				case tar.TypeReg:
					got[e.Path()] = e
				case tar.TypeSymlink:
					links[e.Path()] = e.Header.Linkname
				}
			}
			for p, host := range want {
				e, ok := got[p]
				if !ok {
					t.Errorf("%s is not in the image", p)
					continue
				}
				if host == "" {
					continue
				}
				fi, err := os.Stat(host)
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(e.Data)) != fi.Size() || e.Header.Mode != int64(fi.Mode().Perm()|modeSpecial(fi.Mode())) {
					t.Errorf("%s: %d bytes mode %o, want a copy of %s (%d bytes, mode %v)", p, len(e.Data), e.Header.Mode, host, fi.Size(), fi.Mode())
				}
			}
			for p := range got {
				if _, ok := want[p]; !ok {
					t.Errorf("%s is in the image but neither in the definition nor a library of its executables", p)
				}
			}

			// Every symlink is one of the definition or one of this
			// machine's on the way to a library, and every library path
			// resolves inside the image.
			for _, l := range d.Links {
				if links[l.Path] != l.Target {
					t.Errorf("link %s -> %q, want -> %s", l.Path, links[l.Path], l.Target)
				}
				delete(links, l.Path)
			}
			for p, target := range links {
				if host, err := os.Readlink(p); err != nil || host != target {
					t.Errorf("link %s -> %s is not this machine's (%q, %v)", p, target, host, err)
				}
			}
			for _, lib := range libs {
				if e, err := a.Resolve(lib); err != nil || e.Header.Typeflag != tar.TypeReg {
					t.Errorf("%s does not resolve to a file in the image: %v", lib, err)
				}
			}
		})
	}
}

// modeSpecial returns the Unix setuid, setgid and sticky bits of m.
func modeSpecial(m os.FileMode) os.FileMode {
	var special os.FileMode
	if m&os.ModeSetuid != 0 {
		special |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		special |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		special |= 0o1000
	}
	return special
}

func TestImageMissingTool(t *testing.T) {
	d, err := Lookup("csi-s3")
	if err != nil {
		t.Fatal(err)
	}
	src := fakeSources(t)
	src.Tools = nil
	if _, err := d.Image("registry.example.com/csi-s3:v1", src); err == nil || !strings.Contains(err.Error(), "rclone") {
		t.Errorf("Image() without rclone: error %v, want one naming rclone", err)
	}
	if _, err := Lookup("no-such-binary"); err == nil {
		t.Error("Lookup(no-such-binary) succeeded")
	}
}
