// Package unixsock listens on unix sockets that are never reachable with
// looser permissions than asked for. The device plugin's per-resource
// sockets, the simulators' control sockets and the csi-s3 driver's CSI and
// registration sockets all need this; it is a leaf so that none of them
// links another.
package unixsock

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// Listen listens on a unix socket at path that only the owner can use
// (mode 0600), replacing a stale file there. Closing the listener leaves
// the socket file in place; the caller removes it.
func Listen(path string) (net.Listener, error) {
	return ListenMode(path, 0o600)
}

// ListenMode is Listen with the socket's mode perm. The socket is bound
// under a temporary name, restricted and then renamed, so it is never
// reachable with looser permissions.
func ListenMode(path string, perm os.FileMode) (net.Listener, error) {
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
	if err := os.Chmod(tmp, perm); err != nil {
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
