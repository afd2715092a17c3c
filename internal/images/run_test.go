package images

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/accelstack/accelstack/internal/ociimage"
	"github.com/accelstack/accelstack/test/harness"
)

// runChecks are, for each program and link of the definitions, the
// arguments that make it print its version, and a word of that output.
// The git remote helper is checked by cloning and pushing through it.
var runChecks = map[string]struct {
	args []string
	want string
}{
	"/usr/bin/rclone":      {[]string{"version"}, "rclone v"},
	"/usr/bin/s3fs":        {[]string{"--version"}, "Simple Storage Service File System"},
	"/usr/bin/fusermount3": {[]string{"-V"}, "fusermount3 version"},
	"/usr/bin/fusermount":  {[]string{"-V"}, "fusermount3 version"},
	"/usr/bin/mount":       {[]string{"-V"}, "mount from util-linux"},
	"/usr/bin/umount":      {[]string{"-V"}, "umount from util-linux"},
	"/usr/bin/findmnt":     {[]string{"-V"}, "findmnt from util-linux"},
	"/usr/bin/git":         {[]string{"--version"}, "git version"},
}

// gitHelpers are the programs checked by using git over HTTP.
var gitHelpers = []string{"/usr/lib/git-core/git-remote-http", "/usr/lib/git-core/git-remote-https"}

// rootfs lays out d's image, as the Dockerfiles do, in a new directory with
// the devices a container runtime provides, and returns it.
func rootfs(t *testing.T, d Definition, src Sources) string {
	t.Helper()
	img, err := d.Image(Ref(Registry, d.Binary, Tag), src)
	if err != nil {
		t.Fatal(err)
	}
	var layer bytes.Buffer
	if err := ociimage.WriteLayer(context.Background(), img, &layer); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	untar := exec.Command("tar", "-x", "-C", dir)
	untar.Stdin = &layer
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("tar -x: %v: %s", err, out)
	}
	if err := os.Mkdir(filepath.Join(dir, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, minor := range map[string]uint32{"null": 3, "zero": 5, "random": 8, "urandom": 9} {
		if err := unix.Mknod(filepath.Join(dir, "dev", name), unix.S_IFCHR|0o666, int(unix.Mkdev(1, minor))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// inRoot runs name with args chrooted into dir, with the image's PATH.
func inRoot(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: dir}
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + Path, "HOME=/tmp", "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestImagesRun runs every program of every image inside the image's own
// root file system, so a library or helper missing from an image fails it.
func TestImagesRun(t *testing.T) {
	harness.RequireRoot(t)
	hostDependencies(t)
	src := fakeSources(t)
	for _, tool := range []string{"rclone"} {
		p, err := harness.Tool(tool)
		require(t, err == nil, "the pinned "+tool+" is not installed (make tools)")
		src.Tools[tool] = p
	}
	for _, d := range Definitions {
		t.Run(d.Binary, func(t *testing.T) {
			dir := rootfs(t, d, src)
			// The binary itself is /bin/true here: it runs when its
			// libraries are there.
			if out, err := inRoot(dir, "/usr/bin/"+d.Binary); err != nil {
				t.Errorf("/usr/bin/%s: %v: %s", d.Binary, err, out)
			}
			paths := []string{}
			for _, p := range d.Programs {
				paths = append(paths, p.Path)
			}
			for _, l := range d.Links {
				paths = append(paths, l.Path)
			}
			for _, p := range paths {
				if strings.HasPrefix(p, "/usr/lib/git-core/") {
					continue
				}
				check, ok := runChecks[p]
				if !ok {
					t.Errorf("no run check for %s", p)
					continue
				}
				out, err := inRoot(dir, p, check.args...)
				if err != nil || !strings.Contains(out, check.want) {
					t.Errorf("%s %s: %v: %s; want output with %q", p, strings.Join(check.args, " "), err, out, check.want)
				}
			}
			for _, p := range paths {
				if strings.HasPrefix(p, "/usr/lib/git-core/") {
					gitOverHTTP(t, dir)
					break
				}
			}
		})
	}
}

// gitOverHTTP clones a repository over HTTP with the image's git, commits
// to it and pushes back, as the DataCube git source and sink do.
func gitOverHTTP(t *testing.T, dir string) {
	t.Helper()
	for _, h := range gitHelpers {
		if _, err := os.Lstat(filepath.Join(dir, h)); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	served := t.TempDir()
	host := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+served)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	host("init", "--quiet", "--bare", "--initial-branch=main", filepath.Join(served, "r.git"))
	host("-C", filepath.Join(served, "r.git"), "config", "http.receivepack", "true")
	srv := harness.StartGitHTTP(t, served, "")

	id := []string{"-c", "user.name=test", "-c", "user.email=test@example.com"}
	steps := [][]string{
		{"init", "--quiet", "--initial-branch=main", "/tmp/w"},
		{"-C", "/tmp/w", "remote", "add", "origin", srv.URL + "/r.git"},
		append(append([]string{"-C", "/tmp/w"}, id...), "commit", "--quiet", "--allow-empty", "-m", "from the image"),
		{"-C", "/tmp/w", "push", "--quiet", "origin", "main"},
		{"clone", "--quiet", srv.URL + "/r.git", "/tmp/clone"},
	}
	for _, args := range steps {
		if out, err := inRoot(dir, "/usr/bin/git", args...); err != nil {
			t.Fatalf("git %s in the image: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	out, err := inRoot(dir, "/usr/bin/git", "-C", "/tmp/clone", "log", "--format=%s")
	if err != nil || strings.TrimSpace(out) != "from the image" {
		t.Errorf("git log of the clone: %v: %q, want the pushed commit", err, out)
	}
}
