package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/accelstack/accelstack/internal/ociimage"
)

// pausePackage is the package of the pause program, relative to the
// repository root.
const pausePackage = "./test/cluster/pause"

// buildPause builds the pause program of test/cluster/pause as a static,
// stripped binary (CGO_ENABLED=0, -trimpath, -s -w) named "pause" in outDir
// and returns its path. It runs the go command found on PATH.
func buildPause(ctx context.Context, repoRoot, outDir string) (binaryPath string, err error) {
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

// pauseImage returns the pod sandbox image: the binary at pausePath (as
// built by buildPause) at /pause, run as 65535:65535 like the upstream
// pause image.
func pauseImage(ref, pausePath string) ociimage.Image {
	img := ociimage.Image{Ref: ref, Entrypoint: []string{"/pause"}, User: "65535:65535"}
	img.AddFileMode(pausePath, "/pause", 0o755)
	return img
}
