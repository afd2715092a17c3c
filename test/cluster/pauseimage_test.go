package cluster

import (
	"context"
	"debug/elf"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/accelstack/accelstack/internal/ociimage"
	"github.com/accelstack/accelstack/test/harness"
)

// readImage reads the archive at path back and indexes its layer by path.
func readImage(t *testing.T, path string) (ociimage.Archive, map[string]ociimage.LayerEntry) {
	t.Helper()
	a, err := ociimage.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	byPath := make(map[string]ociimage.LayerEntry, len(a.Layer))
	for _, e := range a.Layer {
		byPath[e.Path()] = e
	}
	return a, byPath
}

func TestBuildPause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := buildPause(ctx, root, filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
			t.Errorf("pause has program header %v: not a static binary", prog.Type)
		}
	}
	if f.Section(".symtab") != nil {
		t.Error("pause has a .symtab: not stripped (-s)")
	}
	f.Close()

	// A static executable brings no libraries along: the layer holds
	// /pause and the defaults of every image.
	p := pauseImage("localhost/accelstack/pause:dev", bin)
	if err := p.AddExecutable(bin, "/pause"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "pause.tar")
	if _, err := ociimage.Write(ctx, p, out); err != nil {
		t.Fatal(err)
	}
	a, byPath := readImage(t, out)
	if got, want := slices.Sorted(maps.Keys(byPath)), []string{"/etc", "/etc/group", "/etc/passwd", "/pause", "/tmp"}; !slices.Equal(got, want) {
		t.Errorf("pause layer holds %q, want %q", got, want)
	}
	if e := byPath["/pause"]; e.Header.Mode&0o111 == 0 || e.Header.Size == 0 {
		t.Errorf("/pause in the layer: %+v", e.Header)
	}
	if got := a.Entrypoint; len(got) != 1 || got[0] != "/pause" {
		t.Errorf("pause entrypoint = %q", got)
	}
	if a.User != "65535:65535" {
		t.Errorf("pause user = %q, want 65535:65535", a.User)
	}
}

func TestPauseExitsOnSignal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := buildPause(ctx, root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// A SIGCHLD with nothing to reap must not end it.
			time.Sleep(100 * time.Millisecond)
			if err := cmd.Process.Signal(syscall.SIGCHLD); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				t.Fatalf("pause exited after SIGCHLD: %v", err)
			case <-time.After(200 * time.Millisecond):
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("pause after %v: %v, want exit 0", sig, err)
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("pause did not exit on %v", sig)
			}
		})
	}
}
