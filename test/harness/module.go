package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
)

// ModuleDir returns the module cache directory of path@version, downloading
// it from the module proxy if need be, for reading a peer's manifests from
// the source its binary was built from.
func ModuleDir(path, version string) (string, error) {
	tmp, err := os.MkdirTemp("", "accelstack-mod-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "mod", "download", "-json", path+"@"+version)
	cmd.Dir = tmp // outside any module, so that no go.mod is touched
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w\n%s", path, version, err, stderr.String())
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s gave no directory: %s", path, version, out)
	}
	return mod.Dir, nil
}
