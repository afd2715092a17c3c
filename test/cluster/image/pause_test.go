package image

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// repoRoot returns the directory of the module's go.mod above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func TestBuildPause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin, err := BuildPause(ctx, repoRoot(t), filepath.Join(t.TempDir(), "out"))
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

	// A static executable brings no libraries along.
	var img Image
	if err := img.AddExecutable(bin, "/pause"); err != nil {
		t.Fatal(err)
	}
	if len(img.entries) != 1 {
		t.Errorf("AddExecutable(pause) added %v, want only /pause", img.entries)
	}

	p := Pause("localhost/accelstack/pause:dev", bin)
	out := filepath.Join(t.TempDir(), "pause.tar")
	if _, err := Write(ctx, p, out); err != nil {
		t.Fatal(err)
	}
	l := readLayout(t, out)
	if e, ok := l.byPath["/pause"]; !ok || e.hdr.Mode != 0o755 || e.hdr.Size == 0 {
		t.Errorf("/pause in the layer: %+v, present %v", e.hdr, ok)
	}
	if got := l.config.Config.Entrypoint; len(got) != 1 || got[0] != "/pause" {
		t.Errorf("pause entrypoint = %q", got)
	}
}

func TestPauseExitsOnSignal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin, err := BuildPause(ctx, repoRoot(t), t.TempDir())
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
