package ociimage

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// Defaults added unless the image has its own entry at the same path.
const (
	defaultPasswd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	defaultGroup = "root:x:0:\n" +
		"nobody:x:65534:\n" +
		"nonroot:x:65532:\n"
	defaultDirMode = 0o755
)

// layerEntries returns every entry of img's layer by path: its own entries,
// the default /etc/passwd, /etc/group and /tmp, and the implicit parent
// directories. It fails when a path's parent is not a directory.
func layerEntries(img Image) (map[string]entry, error) {
	all := make(map[string]entry, len(img.entries)+8)
	for p, e := range img.entries {
		if p != "/" {
			all[p] = e
		}
	}
	defaults := map[string]entry{
		"/etc/passwd": {kind: kindFile, data: []byte(defaultPasswd), mode: 0o644, hasMode: true},
		"/etc/group":  {kind: kindFile, data: []byte(defaultGroup), mode: 0o644, hasMode: true},
		"/tmp":        {kind: kindDir, mode: fs.ModeSticky | 0o777, hasMode: true},
	}
	for p, e := range defaults {
		if _, ok := all[p]; !ok {
			all[p] = e
		}
	}
	for _, p := range slices.Collect(maps.Keys(all)) {
		for dir := path.Dir(p); dir != "/"; dir = path.Dir(dir) {
			parent, ok := all[dir]
			if !ok {
				all[dir] = entry{kind: kindDir, mode: defaultDirMode, hasMode: true}
				continue
			}
			if parent.kind != kindDir {
				return nil, fmt.Errorf("image path %s: parent %s is not a directory", p, dir)
			}
		}
	}
	return all, nil
}

// WriteLayer writes the root file system of img as a tar to w: the layer
// that Write puts in the archive. Extracted as root, it lays the image's
// files out in a directory, such as a Dockerfile stage that is then copied
// into an image from scratch.
func WriteLayer(ctx context.Context, img Image, w io.Writer) error {
	entries, err := layerEntries(img)
	if err != nil {
		return err
	}
	return writeLayer(ctx, w, entries)
}

// writeLayer writes the entries as an uncompressed, deterministic tar: sorted
// by path (so every parent precedes its children), owner 0:0, mtime 0.
func writeLayer(ctx context.Context, w io.Writer, entries map[string]entry) error {
	tw := tar.NewWriter(w)
	for _, p := range slices.Sorted(maps.Keys(entries)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := writeEntry(tw, p, entries[p]); err != nil {
			return fmt.Errorf("layer entry %s: %w", p, err)
		}
	}
	return tw.Close()
}

func writeEntry(tw *tar.Writer, p string, e entry) error {
	hdr := &tar.Header{
		Name:    strings.TrimPrefix(p, "/"),
		ModTime: time.Unix(0, 0),
		Mode:    unixMode(e.mode),
	}
	switch e.kind {
	case kindDir:
		hdr.Typeflag = tar.TypeDir
		hdr.Name += "/"
		return tw.WriteHeader(hdr)
	case kindSymlink:
		hdr.Typeflag = tar.TypeSymlink
		hdr.Linkname = e.target
		hdr.Mode = 0o777
		return tw.WriteHeader(hdr)
	}
	hdr.Typeflag = tar.TypeReg
	if e.hostPath == "" {
		hdr.Size = int64(len(e.data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(e.data)
		return err
	}
	f, err := os.Open(e.hostPath)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", e.hostPath)
	}
	if !e.hasMode {
		hdr.Mode = unixMode(fi.Mode())
	}
	hdr.Size = fi.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, f, hdr.Size); err != nil {
		return fmt.Errorf("copying %s: %w", e.hostPath, err)
	}
	return nil
}

// unixMode converts m to the Unix mode bits of a tar header. Special bits
// may come as fs.Mode{Setuid,Setgid,Sticky} or as the Unix bits 0o7000.
func unixMode(m fs.FileMode) int64 {
	mode := int64(m & 0o7777)
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}
