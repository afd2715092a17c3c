package ociimage

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
)

// Image describes a single-layer container image. The zero value is an empty
// image; set Ref before calling [Write].
//
// Image paths are absolute, slash-separated paths inside the image. Parent
// directories are created implicitly with mode 0755. Adding an entry at a
// path that already has one replaces it. An Image holds a map: copy it with
// [Image.Clone], not by assignment, before changing the copy.
type Image struct {
	// Ref is the full image reference with a tag, e.g.
	// "ghcr.io/accelstack/csi-s3:latest". containerd and podman name the
	// loaded image after it.
	Ref string
	// Entrypoint is the command the container runs.
	Entrypoint []string
	// Cmd holds the default arguments to Entrypoint.
	Cmd []string
	// Env holds KEY=value pairs.
	Env []string
	// WorkingDir is the working directory of the container; empty means /.
	WorkingDir string
	// User is the user (and group) the container runs as, e.g.
	// "65532:65532"; empty means root.
	User string
	// Architecture is the GOARCH-style CPU architecture recorded in the
	// image config; empty means the architecture of this program.
	Architecture string
	// Labels are the image config's labels, such as
	// org.opencontainers.image.version.
	Labels map[string]string

	entries map[string]entry
}

type entryKind int

const (
	kindFile entryKind = iota
	kindDir
	kindSymlink
)

// entry is one explicitly added path of the image.
type entry struct {
	kind entryKind
	// hostPath is the source of a file whose content is read at Write time;
	// empty when data holds the content.
	hostPath string
	data     []byte
	// mode holds permission and special bits; for a file from the host,
	// hasMode false means "take the host file's mode".
	mode    fs.FileMode
	hasMode bool
	target  string
}

// AddFile copies the regular file at hostPath to imagePath, keeping its
// permission bits. The file is read when the image is written.
func (img *Image) AddFile(hostPath, imagePath string) {
	img.put(imagePath, entry{kind: kindFile, hostPath: hostPath})
}

// AddFileMode copies the regular file at hostPath to imagePath with the
// given mode.
func (img *Image) AddFileMode(hostPath, imagePath string, mode fs.FileMode) {
	img.put(imagePath, entry{kind: kindFile, hostPath: hostPath, mode: mode, hasMode: true})
}

// AddData adds a regular file at imagePath holding data.
func (img *Image) AddData(imagePath string, data []byte, mode fs.FileMode) {
	img.put(imagePath, entry{kind: kindFile, data: data, mode: mode, hasMode: true})
}

// AddDir adds a directory. Mode may carry fs.ModeSticky, fs.ModeSetuid and
// fs.ModeSetgid or the equivalent Unix bits, so 0o1777 and
// fs.ModeSticky|0o777 both make a /tmp-style directory.
func (img *Image) AddDir(imagePath string, mode fs.FileMode) {
	img.put(imagePath, entry{kind: kindDir, mode: mode, hasMode: true})
}

// AddSymlink adds a symbolic link at imagePath pointing to target, which is
// stored as given (relative targets resolve against the link's directory).
func (img *Image) AddSymlink(imagePath, target string) {
	img.put(imagePath, entry{kind: kindSymlink, target: target})
}

// Clone returns a deep copy of img that can be changed independently.
func (img Image) Clone() Image {
	c := img
	c.Entrypoint = slices.Clone(img.Entrypoint)
	c.Cmd = slices.Clone(img.Cmd)
	c.Env = slices.Clone(img.Env)
	c.Labels = maps.Clone(img.Labels)
	c.entries = maps.Clone(img.entries)
	return c
}

func (img *Image) put(imagePath string, e entry) {
	if img.entries == nil {
		img.entries = make(map[string]entry)
	}
	img.entries[cleanPath(imagePath)] = e
}

// cleanPath makes p absolute and clean, e.g. "usr//bin/" -> "/usr/bin".
func cleanPath(p string) string {
	return path.Clean("/" + p)
}

// tag returns the tag of ref: the part after the last colon that follows
// the last slash.
func tag(ref string) (string, error) {
	name := ref[strings.LastIndex(ref, "/")+1:]
	i := strings.LastIndex(name, ":")
	if ref == "" || strings.Contains(ref, "@") || i < 0 || i == len(name)-1 {
		return "", fmt.Errorf("image reference %q: want name:tag", ref)
	}
	return name[i+1:], nil
}
