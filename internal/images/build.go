package images

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/accelstack/accelstack/internal/ociimage"
)

// Labels of the image config that say which build an image holds.
const (
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
)

// Sources says where the files of the images are on this machine.
type Sources struct {
	// BinDir holds the built accelstack binaries, one file per binary.
	BinDir string
	// Tools maps the name of a Go tool to its executable.
	Tools map[string]string
}

// Image returns the image of d named ref, with the binary from
// src.BinDir, the Go tools from src.Tools and everything else from the
// same paths on this machine. The files are read when the image is written.
func (d Definition) Image(ref string, src Sources) (ociimage.Image, error) {
	entry := d.Entrypoint()
	img := ociimage.Image{Ref: ref, Entrypoint: entry, Env: []string{"PATH=" + Path}, User: d.User}
	if err := img.AddExecutable(filepath.Join(src.BinDir, d.Binary), entry[0]); err != nil {
		return ociimage.Image{}, fmt.Errorf("image %s: %w", ref, err)
	}
	for _, p := range d.Programs {
		host := p.Host
		if p.Tool != "" {
			if host = src.Tools[p.Tool]; host == "" {
				return ociimage.Image{}, fmt.Errorf("image %s: no executable given for the tool %s", ref, p.Tool)
			}
		}
		if err := img.AddExecutable(host, p.Path); err != nil {
			return ociimage.Image{}, fmt.Errorf("image %s: %w%s", ref, err, fromPackage(p.Package))
		}
	}
	for _, f := range d.Files {
		if _, err := os.Stat(f.Path); err != nil {
			return ociimage.Image{}, fmt.Errorf("image %s: %w%s", ref, err, fromPackage(f.Package))
		}
		img.AddFile(f.Path, f.Path)
	}
	for _, l := range d.Links {
		img.AddSymlink(l.Path, l.Target)
	}
	return img, nil
}

// fromPackage names the Debian package that installs a missing file.
func fromPackage(pkg string) string {
	if pkg == "" {
		return ""
	}
	return " (Debian package " + pkg + ")"
}

// Labels returns the labels that record version and revision.
func Labels(version, revision string) map[string]string {
	return map[string]string{LabelVersion: version, LabelRevision: revision}
}
