package cluster

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/accelstack/accelstack/internal/ociimage"
)

// busyboxPATH is the PATH of the busybox image.
const busyboxPATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// busyboxImage returns a shell image: the busybox binary at busyboxPath
// (on Debian /bin/busybox of the busybox-static package) at /bin/busybox, a
// symlink in /bin for each applet it lists, and /bin/sh as the entrypoint.
// A dynamically linked busybox gets its libraries too.
func busyboxImage(ref, busyboxPath string) (ociimage.Image, error) {
	img := ociimage.Image{Ref: ref, Entrypoint: []string{"/bin/sh"}, Env: []string{busyboxPATH}}
	if err := img.AddExecutable(busyboxPath, "/bin/busybox"); err != nil {
		return ociimage.Image{}, err
	}
	out, err := exec.Command(busyboxPath, "--list").Output()
	if err != nil {
		return ociimage.Image{}, fmt.Errorf("listing busybox applets: %w", err)
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "busybox" || strings.Contains(applet, "/") {
			continue
		}
		img.AddSymlink("/bin/"+applet, "busybox")
	}
	return img, nil
}
