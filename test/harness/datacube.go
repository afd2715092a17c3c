package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

var (
	datacubeOnce sync.Once
	datacubeBin  string
	datacubeErr  error
)

// BuildDataCubeExecutor builds cmd/datacube-executor once per process into a
// temp dir and returns the binary's path.
func BuildDataCubeExecutor() (string, error) {
	datacubeOnce.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			datacubeErr = err
			return
		}
		dir, err := os.MkdirTemp("", "accelstack-datacube-")
		if err != nil {
			datacubeErr = err
			return
		}
		datacubeBin = filepath.Join(dir, "datacube-executor")
		cmd := exec.Command("go", "build", "-o", datacubeBin, "./cmd/datacube-executor")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			datacubeErr = fmt.Errorf("building datacube-executor: %w\n%s", err, out)
		}
	})
	return datacubeBin, datacubeErr
}
