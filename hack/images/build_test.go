package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accelstack/accelstack/internal/images"
	"github.com/accelstack/accelstack/internal/ociimage"
)

// stampedBinaries builds testdata/stamped as each of binaries into a new
// directory, stamped like `make build` with version v1.2.3 and commit
// abc1234, and returns the directory.
func stampedBinaries(t *testing.T, binaries ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, b := range binaries {
		buildStamped(t, b, filepath.Join(dir, b))
	}
	return dir
}

// buildStamped builds testdata/stamped, calling itself name, at path.
func buildStamped(t *testing.T, name, path string) {
	t.Helper()
	const pkg = "github.com/accelstack/accelstack/pkg/version"
	cmd := exec.Command("go", "build", "-trimpath", "-o", path,
		"-ldflags", "-X main.name="+name+" -X "+pkg+".gitVersion=v1.2.3 -X "+pkg+".gitCommit=abc1234 -X "+pkg+".buildDate=2026-01-01T00:00:00Z",
		"./testdata/stamped")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

func TestBuild(t *testing.T) {
	binDir := stampedBinaries(t, "device-plugin", "node-agent")
	var defs []images.Definition
	for _, b := range []string{"device-plugin", "node-agent"} {
		d, err := images.Lookup(b)
		if err != nil {
			t.Fatal(err)
		}
		defs = append(defs, d)
	}
	out := t.TempDir()
	var table bytes.Buffer
	ctx := context.Background()
	if err := build(ctx, defs, images.Sources{BinDir: binDir}, out, "registry.example.com/team", "v1", &table); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(table.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "IMAGE") {
		t.Fatalf("build printed\n%s\nwant a header and a line per image", table.String())
	}
	for i, d := range defs {
		path := filepath.Join(out, d.Binary+".tar")
		a, err := ociimage.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		ref := "registry.example.com/team/" + d.Binary + ":v1"
		if a.Ref != ref || a.Labels[images.LabelVersion] != "v1.2.3" || a.Labels[images.LabelRevision] != "abc1234" {
			t.Errorf("%s: ref %s labels %v; want %s, version v1.2.3, revision abc1234", path, a.Ref, a.Labels, ref)
		}
		if f := strings.Fields(lines[i+1]); len(f) != 6 || f[0] != ref || f[1] != "v1.2.3" || f[2] != a.Digest || f[5] != path {
			t.Errorf("build printed %q, want %s, v1.2.3, %s, its size and %s", lines[i+1], ref, a.Digest, path)
		}
	}

	// The same binaries give the same digests, and no archive is rewritten.
	before, err := os.Stat(filepath.Join(out, "node-agent.tar"))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := build(ctx, defs, images.Sources{BinDir: binDir}, out, "registry.example.com/team", "v1", &again); err != nil {
		t.Fatal(err)
	}
	if again.String() != table.String() {
		t.Errorf("a second build printed\n%s\nthe first\n%s", again.String(), table.String())
	}
	if after, err := os.Stat(filepath.Join(out, "node-agent.tar")); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("a second build rewrote node-agent.tar (%v)", err)
	}
}

func TestBinaryVersion(t *testing.T) {
	dir := stampedBinaries(t, "node-agent")
	v, err := binaryVersion(context.Background(), filepath.Join(dir, "node-agent"))
	if err != nil || v.version != "v1.2.3" || v.commit != "abc1234" {
		t.Errorf("binaryVersion() = %+v, %v; want v1.2.3 abc1234", v, err)
	}
	// A binary that reports another name is not the one asked for.
	buildStamped(t, "other", filepath.Join(dir, "node-agent"))
	if _, err := binaryVersion(context.Background(), filepath.Join(dir, "node-agent")); err == nil {
		t.Error("binaryVersion() of a binary that calls itself other succeeded")
	}

	// A Kubernetes component, the scheduler, reports the Kubernetes version
	// it is built on, and the commit with --version=raw.
	scheduler := filepath.Join(dir, "scheduler")
	buildKubeStamped(t, scheduler, "-X main.gitVersion=v1.37.2 -X main.gitCommit=abc1234")
	if v, err := binaryVersion(context.Background(), scheduler); err != nil || v.version != "v1.37.2" || v.commit != "abc1234" {
		t.Errorf("binaryVersion() of a Kubernetes component = %+v, %v; want v1.37.2 abc1234", v, err)
	}
	buildKubeStamped(t, scheduler, "-X main.gitVersion=v1.37.2 -X main.gitCommit=")
	if v, err := binaryVersion(context.Background(), scheduler); err == nil {
		t.Errorf("binaryVersion() of a Kubernetes component without a commit = %+v, want an error", v)
	}
}

// buildKubeStamped builds testdata/kubestamped at path with ldflags.
func buildKubeStamped(t *testing.T, path, ldflags string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-trimpath", "-o", path, "-ldflags", ldflags, "./testdata/kubestamped")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

func TestToolFlag(t *testing.T) {
	tools := toolFlag{}
	if err := tools.Set("rclone=/opt/rclone"); err != nil || tools["rclone"] != "/opt/rclone" {
		t.Errorf("Set(rclone=/opt/rclone) = %v, tools %v", err, tools)
	}
	for _, bad := range []string{"rclone", "=/opt/rclone", "rclone="} {
		if err := tools.Set(bad); err == nil {
			t.Errorf("Set(%q) succeeded", bad)
		}
	}
}
