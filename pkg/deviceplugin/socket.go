package deviceplugin

import "strings"

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
