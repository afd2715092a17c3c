package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// RepoRoot returns the root of the accelstack checkout: the first
// directory with accelstack's go.mod above this source file or, in a
// binary built with -trimpath (whose file names are module paths), above
// the working directory (go test runs a test in its package's directory).
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("locating the harness source file")
	}
	dir := filepath.Dir(file)
	if !filepath.IsAbs(dir) {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("locating the checkout: %w", err)
		}
		dir = wd
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/accelstack/accelstack\n") {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no accelstack go.mod above the harness package or the working directory")
		}
		dir = parent
	}
}

// CacheDir returns the directory where built tools are cached:
// $ACCELSTACK_CACHE, else $XDG_CACHE_HOME/accelstack, else ~/.cache/accelstack.
func CacheDir() string {
	if d := os.Getenv("ACCELSTACK_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "accelstack")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "accelstack-cache")
	}
	return filepath.Join(home, ".cache", "accelstack")
}

// KubeAssets returns the directory holding etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kubectl: $KUBEBUILDER_ASSETS if
// it holds them, else the cache filled by hack/envtest-assets.sh.
func KubeAssets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err == nil {
			return dir, nil
		}
		return "", fmt.Errorf("$KUBEBUILDER_ASSETS=%s holds no kube-apiserver; run 'make envtest-assets'", dir)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	out, err := exec.Command(filepath.Join(root, "hack", "envtest-assets.sh"), "--print-only").Output()
	if err != nil {
		return "", fmt.Errorf("asking hack/envtest-assets.sh for the assets: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", errors.New("the Kubernetes test binaries are not built; run 'make envtest-assets' (a cold build takes several minutes)")
	}
	return dir, nil
}

// Tool returns the path of a tool the Makefile installs (make tools): the
// file named by $ACCELSTACK_<NAME> (set by make test), else the link in the
// cache's bin directory, else $PATH.
func Tool(name string) (string, error) {
	envVar := "ACCELSTACK_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if p := os.Getenv(envVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %w", envVar, err)
		}
		return p, nil
	}
	p := filepath.Join(CacheDir(), "bin", name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found in %s or $PATH; run 'make tools'", name, filepath.Dir(p))
}
