package integration

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accelstack/accelstack/internal/images"
	"github.com/accelstack/accelstack/test/harness"
)

// TestBinariesCommandLine builds every binary (without the symbol table
// and DWARF, which take a third of the link) and checks that it prints
// --help and --version and refuses a bad flag with exit status 2 and a
// message naming the flag. The scheduler, a module of its own built on
// kube-scheduler, has kube-scheduler's command line: its --version prints
// the Kubernetes version it is stamped with, and a bad flag exits 1. The
// command line t9k has kubectl's conventions: cobra's usage, and a bad
// flag named with exit status 2.
func TestBinariesCommandLine(t *testing.T) {
	t.Parallel()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := filepath.Glob(filepath.Join(root, "cmd", "*"))
	if err != nil || len(cmds) != len(images.Definitions) {
		t.Fatalf("cmd/* = %v (%v), want the %d binaries that have images", cmds, err, len(images.Definitions))
	}
	binDir := t.TempDir()
	for _, cmd := range cmds {
		name := filepath.Base(cmd)
		t.Run(name, func(t *testing.T) {
			bin := filepath.Join(binDir, name)
			build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X github.com/accelstack/accelstack/pkg/version.gitVersion=v1.2.3-test", "-o", bin, "./cmd/"+name)
			build.Dir = root
			type testCase struct {
				args     []string
				wantCode int
				wantOut  string
			}
			testCases := []testCase{
				{args: []string{"--help"}, wantCode: 0, wantOut: "Usage: " + name},
				{args: []string{"--version"}, wantCode: 0, wantOut: name + " v1.2.3-test"},
				{args: []string{"--no-such-flag"}, wantCode: 2, wantOut: "flag provided but not defined: -no-such-flag"},
			}
			if name == "t9k" || name == "t9k-pf" {
				testCases = []testCase{
					{args: []string{"--help"}, wantCode: 0, wantOut: "Usage:\n  " + name + " [command]"},
					{args: []string{"--version"}, wantCode: 0, wantOut: name + " v1.2.3-test"},
					{args: []string{"--no-such-flag"}, wantCode: 2, wantOut: "unknown flag: --no-such-flag"},
				}
			}
			if name == "scheduler" {
				build = exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X k8s.io/component-base/version.gitVersion=v1.2.3-test", "-o", bin, ".")
				build.Dir = cmd
				testCases = []testCase{
					{args: []string{"--help"}, wantCode: 0, wantOut: "Usage:\n  kube-scheduler [flags]"},
					{args: []string{"--version"}, wantCode: 0, wantOut: "Kubernetes v1.2.3-test"},
					{args: []string{"--no-such-flag"}, wantCode: 1, wantOut: "unknown flag: --no-such-flag"},
				}
			}
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			for _, tc := range testCases {
				out, err := exec.Command(bin, tc.args...).CombinedOutput()
				code := 0
				var exitErr *exec.ExitError
				if errors.As(err, &exitErr) {
					code = exitErr.ExitCode()
				} else if err != nil {
					t.Fatalf("%s %v: %v", name, tc.args, err)
				}
				if code != tc.wantCode || !strings.Contains(string(out), tc.wantOut) {
					t.Errorf("%s %v = exit %d, output %q; want exit %d and %q", name, tc.args, code, out, tc.wantCode, tc.wantOut)
				}
			}
		})
	}
}
