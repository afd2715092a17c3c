package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/internal/images"
)

// hostDependency is a program the cluster needs and the Debian package
// that has it.
type hostDependency struct {
	path, pkg string
}

// hostDependencies are the cluster's own programs and, after them, the
// programs and files of the accelstack images (package images).
var hostDependencies = append([]hostDependency{
	{"/usr/bin/containerd", "containerd"},
	{"/usr/bin/ctr", "containerd"},
	{"/usr/sbin/runc", "runc"},
	{cniBinDir + "/bridge", "containernetworking-plugins"},
	{"/bin/busybox", "busybox-static"},
	{"/sbin/ip", "iproute2"},
	// kube-router, the NetworkPolicy enforcer, runs both.
	{"/usr/sbin/iptables", "iptables"},
	{"/usr/sbin/ipset", "ipset"},
}, imageDependencies()...)

// imageDependencies lists what the accelstack images copy from this
// machine's Debian packages.
func imageDependencies() []hostDependency {
	var deps []hostDependency
	for _, d := range images.Definitions {
		for _, p := range d.Programs {
			if p.Host != "" {
				deps = append(deps, hostDependency{p.Host, p.Package})
			}
		}
		for _, f := range d.Files {
			deps = append(deps, hostDependency{f.Path, f.Package})
		}
	}
	return deps
}

// preflight checks that this runs as root and installs the Debian
// packages of missing dependencies.
func preflight(ctx context.Context) error {
	if os.Geteuid() != 0 {
		return errors.New("the local cluster runs containerd and a kubelet: run as root")
	}
	var missing []string
	seen := map[string]bool{}
	for _, d := range hostDependencies {
		if _, err := os.Stat(d.path); err != nil && !seen[d.pkg] {
			missing = append(missing, d.pkg)
			seen[d.pkg] = true
		}
	}
	if len(missing) == 0 {
		return nil
	}
	klog.FromContext(ctx).Info("Installing Debian packages", "packages", missing)
	install := func() error {
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"install", "-y", "--no-install-recommends"}, missing...)...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("apt-get install %s: %w: %s", strings.Join(missing, " "), err, lastLines(out, 10))
		}
		return nil
	}
	if err := install(); err != nil {
		if out, uerr := exec.CommandContext(ctx, "apt-get", "update").CombinedOutput(); uerr != nil {
			return fmt.Errorf("%w; apt-get update: %w: %s", err, uerr, lastLines(out, 5))
		}
		return install()
	}
	return nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
