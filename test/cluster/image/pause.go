package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// pausePackage is the package of the pause program, relative to the
// repository root.
const pausePackage = "./test/cluster/pause"

// BuildPause builds the pause program of test/cluster/pause as a static,
// stripped binary (CGO_ENABLED=0, -trimpath, -s -w) named "pause" in outDir
// and returns its path. It runs the go command found on PATH.
func BuildPause(ctx context.Context, repoRoot, outDir string) (binaryPath string, err error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", fmt.Errorf("building pause: %w", err)
	}
	out, err := filepath.Abs(filepath.Join(outDir, "pause"))
	if err != nil {
		return "", fmt.Errorf("building pause: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pausePackage)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building pause: %w\n%s", err, msg)
	}
	return out, nil
}

// Pause returns the pod sandbox image: the binary at pausePath (as built by
// BuildPause) at /pause, run as 65535:65535 like the upstream pause image.
func Pause(ref, pausePath string) Image {
	img := Image{Ref: ref, Entrypoint: []string{"/pause"}, User: "65535:65535"}
	img.AddFileMode(pausePath, "/pause", 0o755)
	return img
}
