package ociimage

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
)

// Archive is an image archive as Read finds it.
type Archive struct {
	// Ref is the full reference (io.containerd.image.name) and Tag the tag
	// (org.opencontainers.image.ref.name) of the index entry.
	Ref, Tag string
	// Digest is the manifest's digest, "sha256:<hex>".
	Digest string
	// OS and Architecture are the platform of the image.
	OS, Architecture string
	// Entrypoint, Cmd, Env, WorkingDir, User and Labels are the container
	// configuration.
	Entrypoint, Cmd, Env []string
	WorkingDir, User     string
	Labels               map[string]string
	// Layer holds the entries of the image's one layer, in order.
	Layer []LayerEntry
}

// LayerEntry is one entry of a layer.
type LayerEntry struct {
	Header *tar.Header
	// Data is the content of a regular file.
	Data []byte
}

// Path returns the entry's absolute path in the image.
func (e LayerEntry) Path() string { return cleanPath(e.Header.Name) }

// Resolve follows p through the layer's symlinks, as the kernel would
// inside the container, and returns the entry it finally names.
func (a *Archive) Resolve(p string) (LayerEntry, error) {
	byPath := make(map[string]LayerEntry, len(a.Layer))
	for _, e := range a.Layer {
		byPath[e.Path()] = e
	}
	orig := p
	for range maxSymlinks {
		parts := strings.Split(strings.TrimPrefix(cleanPath(p), "/"), "/")
		cur, restart := "/", false
		for i, part := range parts {
			cur = path.Join(cur, part)
			e, ok := byPath[cur]
			if !ok {
				return LayerEntry{}, fmt.Errorf("resolving %s: %s is not in the layer: %w", orig, cur, fs.ErrNotExist)
			}
			if e.Header.Typeflag != tar.TypeSymlink {
				continue
			}
			target := e.Header.Linkname
			if !path.IsAbs(target) {
				target = path.Join(path.Dir(cur), target)
			}
			p, restart = path.Join(append([]string{target}, parts[i+1:]...)...), true
			break
		}
		if !restart {
			return byPath[cur], nil
		}
	}
	return LayerEntry{}, fmt.Errorf("resolving %s: %w", orig, syscall.ELOOP)
}

// layout is an archive read back with its documents as written.
type layout struct {
	index    index
	manifest manifest
	config   imageConfig
	layer    []LayerEntry
}

// Read reads the image archive at path, as Write writes it, into memory. It
// fails unless the archive is an OCI image layout with one manifest of one
// uncompressed layer, annotated with its reference and tag, and every blob
// from index.json down to the layer matches its descriptor's digest and
// size.
func Read(path string) (Archive, error) {
	l, err := read(path)
	if err != nil {
		return Archive{}, err
	}
	md := l.index.Manifests[0]
	c := l.config.Config
	return Archive{
		Ref:          md.Annotations[annotationImageName],
		Tag:          md.Annotations[annotationRefName],
		Digest:       md.Digest,
		OS:           l.config.OS,
		Architecture: l.config.Architecture,
		Entrypoint:   c.Entrypoint,
		Cmd:          c.Cmd,
		Env:          c.Env,
		WorkingDir:   c.WorkingDir,
		User:         c.User,
		Labels:       c.Labels,
		Layer:        l.layer,
	}, nil
}

func read(path string) (layout, error) {
	f, err := os.Open(path)
	if err != nil {
		return layout{}, err
	}
	defer f.Close()
	entries, err := readTar(f)
	if err != nil {
		return layout{}, fmt.Errorf("reading %s: %w", path, err)
	}
	l, err := parseLayout(entries)
	if err != nil {
		return layout{}, fmt.Errorf("image archive %s: %w", path, err)
	}
	return l, nil
}

func parseLayout(entries []LayerEntry) (layout, error) {
	files := make(map[string][]byte, len(entries))
	for _, e := range entries {
		files[e.Header.Name] = e.Data
	}
	var l layout
	if got := string(files["oci-layout"]); got != ociLayout {
		return l, fmt.Errorf("oci-layout is %q, want %q", got, ociLayout)
	}
	if err := json.Unmarshal(files["index.json"], &l.index); err != nil {
		return l, fmt.Errorf("index.json: %w", err)
	}
	if l.index.SchemaVersion != 2 || l.index.MediaType != mediaTypeIndex || len(l.index.Manifests) != 1 {
		return l, fmt.Errorf("index.json is %s, want an OCI index of schemaVersion 2 with one manifest", files["index.json"])
	}
	md := l.index.Manifests[0]
	if md.MediaType != mediaTypeManifest {
		return l, fmt.Errorf("index.json names a %s, want %s", md.MediaType, mediaTypeManifest)
	}
	ref := md.Annotations[annotationImageName]
	if refTag, err := tag(ref); err != nil || md.Annotations[annotationRefName] != refTag {
		return l, fmt.Errorf("index.json annotates the image %s %q and %s %q, want a name:tag and its tag",
			annotationImageName, ref, annotationRefName, md.Annotations[annotationRefName])
	}
	if err := unmarshalBlob(files, md, &l.manifest); err != nil {
		return l, err
	}
	m := l.manifest
	if m.SchemaVersion != 2 || m.Config.MediaType != mediaTypeConfig || len(m.Layers) != 1 || m.Layers[0].MediaType != mediaTypeLayer {
		return l, fmt.Errorf("manifest %s: want an OCI config and one uncompressed layer", md.Digest)
	}
	if err := unmarshalBlob(files, m.Config, &l.config); err != nil {
		return l, err
	}
	if md.Platform == nil || md.Platform.OS != l.config.OS || md.Platform.Architecture != l.config.Architecture {
		return l, fmt.Errorf("index.json platform %+v differs from the config's %s/%s", md.Platform, l.config.OS, l.config.Architecture)
	}
	layer, err := blob(files, m.Layers[0])
	if err != nil {
		return l, err
	}
	if r := l.config.RootFS; r.Type != "layers" || !slices.Equal(r.DiffIDs, []string{m.Layers[0].Digest}) {
		return l, fmt.Errorf("config rootfs %+v, want layers [%s]", r, m.Layers[0].Digest)
	}
	if l.layer, err = readTar(bytes.NewReader(layer)); err != nil {
		return l, fmt.Errorf("layer %s: %w", m.Layers[0].Digest, err)
	}
	return l, nil
}

// blob returns the blob that d points at, failing unless it exists under
// its digest and its length and sha256 match d.
func blob(files map[string][]byte, d descriptor) ([]byte, error) {
	b, ok := files[blobPath(d)]
	if !ok {
		return nil, fmt.Errorf("no blob %s", d.Digest)
	}
	if got := blobDescriptor(d.MediaType, b); got.Digest != d.Digest || got.Size != d.Size {
		return nil, fmt.Errorf("blob %s holds %d bytes of digest %s, its descriptor says %d bytes", d.Digest, got.Size, got.Digest, d.Size)
	}
	return b, nil
}

func unmarshalBlob(files map[string][]byte, d descriptor, v any) error {
	b, err := blob(files, d)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s %s: %w", d.MediaType, d.Digest, err)
	}
	return nil
}

// readTar returns the entries of the tar in r, in order.
func readTar(r io.Reader) ([]LayerEntry, error) {
	var entries []LayerEntry
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return entries, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", hdr.Name, err)
		}
		entries = append(entries, LayerEntry{Header: hdr, Data: data})
	}
}
