package deviceplugin

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// SocketName returns the socket file name for a resource: the first label
// of the resource domain, a dash, and the resource's name, e.g.
// nvidia.com/mig-1g.5gb -> nvidia-mig-1g.5gb.sock.
func SocketName(resource string) string {
	domain, name, ok := strings.Cut(resource, "/")
	if !ok {
		return strings.ReplaceAll(resource, "/", "-") + ".sock"
	}
	vendor, _, _ := strings.Cut(domain, ".")
	return vendor + "-" + name + ".sock"
}

// listenUnix listens on a unix socket at path that only the owner can use
// (mode 0600). The socket is bound under a temporary name, restricted and
// then renamed, so it is never reachable with looser permissions.
func listenUnix(path string) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("removing stale socket %s: %w", path, err)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	_ = os.Remove(tmp)
	l, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	ul := l.(*net.UnixListener)
	ul.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		l.Close()
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("restricting socket %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		l.Close()
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("placing socket %s: %w", path, err)
	}
	return l, nil
}
