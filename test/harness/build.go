package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// builds caches one build per binary for the life of the test process.
var builds sync.Map // name -> *build

type build struct {
	once sync.Once
	path string
	err  error
}

// BuildCmd builds ./cmd/<name> once per process into a temp dir and returns
// the binary's path, so tests and bench programs run the real binary. A
// command with a Go module of its own (cmd/<name>/go.mod) is built in it.
func BuildCmd(name string) (string, error) {
	v, _ := builds.LoadOrStore(name, &build{})
	b := v.(*build)
	b.once.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			b.err = err
			return
		}
		dir, err := os.MkdirTemp("", "accelstack-"+name+"-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, name)
		// -trimpath, as `make build` builds: the packages compiled for one
		// are in the build cache for the other.
		cmd := exec.Command("go", "build", "-trimpath", "-o", b.path, "./cmd/"+name)
		cmd.Dir = root
		if _, err := os.Stat(filepath.Join(root, "cmd", name, "go.mod")); err == nil {
			cmd = exec.Command("go", "build", "-trimpath", "-o", b.path, ".")
			cmd.Dir = filepath.Join(root, "cmd", name)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("building %s: %w\n%s", name, err, out)
		}
	})
	return b.path, b.err
}
