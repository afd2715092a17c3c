package sequencer

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Install sets up the tools directory dir of a pod: it copies executable,
// the running workflow-tools, to dir/workflow-tools, creates the state
// directory, world-writable since the steps may run as different users,
// and writes the scripts that environ (os.Environ()) holds in
// WORKFLOW_TOOLS_SCRIPT_<i> variables, base64-encoded, to dir/scripts/<i>,
// readable and executable by all.
func Install(dir, executable string, environ []string) error {
	if err := copyExecutable(executable, filepath.Join(dir, Binary)); err != nil {
		return err
	}
	state := filepath.Join(dir, StateDir)
	if err := os.MkdirAll(state, 0o755); err != nil {
		return err
	}
	// The steps' users, whichever they are, create their state files here.
	if err := os.Chmod(state, 0o777); err != nil {
		return err
	}
	scripts := filepath.Join(dir, ScriptsDir)
	if err := os.MkdirAll(scripts, 0o755); err != nil {
		return err
	}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		index, ok := strings.CutPrefix(name, ScriptEnvPrefix)
		if !ok {
			continue
		}
		i, err := strconv.Atoi(index)
		if err != nil || i < 0 || strconv.Itoa(i) != index {
			return fmt.Errorf("environment variable %s: %q is not a step index", name, index)
		}
		script, err := base64.StdEncoding.DecodeString(value)
		if err != nil {
			return fmt.Errorf("environment variable %s: decoding the script: %w", name, err)
		}
		if err := writeFileAtomic(ScriptPath(dir, i), ScriptFile(string(script)), 0o755); err != nil {
			return fmt.Errorf("writing the script of step %d: %w", i, err)
		}
	}
	return nil
}

// copyExecutable copies the file src to dst, mode 0755.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return fmt.Errorf("copying %s: %w", src, err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// writeFileAtomic writes data to a temporary file next to name, sets its
// mode and renames it to name, so that name, once it exists, is complete.
func writeFileAtomic(name string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	// CreateTemp makes the file 0600; others (the steps' users) read it.
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
