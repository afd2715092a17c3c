package ociimage

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// OCI media types and the annotations of the index entry.
const (
	mediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	mediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	mediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar"

	// annotationImageName carries the full reference; ctr images import
	// names the image after it.
	annotationImageName = "io.containerd.image.name"
	// annotationRefName carries the tag, as the OCI layout spec asks.
	annotationRefName = "org.opencontainers.image.ref.name"

	ociLayout = `{"imageLayoutVersion":"1.0.0"}`
)

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

// imageConfig is the subset of the OCI image config that Write fills in.
type imageConfig struct {
	Architecture string          `json:"architecture"`
	OS           string          `json:"os"`
	Config       containerConfig `json:"config"`
	RootFS       rootFS          `json:"rootfs"`
}

type containerConfig struct {
	User       string            `json:"User,omitempty"`
	Env        []string          `json:"Env,omitempty"`
	Entrypoint []string          `json:"Entrypoint,omitempty"`
	Cmd        []string          `json:"Cmd,omitempty"`
	WorkingDir string            `json:"WorkingDir,omitempty"`
	Labels     map[string]string `json:"Labels,omitempty"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

// Write writes img as an OCI image-layout tarball at path, replacing it
// atomically, and returns the manifest digest ("sha256:<hex>"). The tarball
// holds one uncompressed, deterministic layer.
//
// The digest and the reference are also recorded in path+".digest", as
// "<digest>  <ref>". When path exists and that file already records the same
// digest and reference, the tarball is left untouched, so writing an
// unchanged image again costs only reading its files.
func Write(ctx context.Context, img Image, path string) (digest string, err error) {
	refTag, err := tag(img.Ref)
	if err != nil {
		return "", err
	}

	// The layer goes to a temporary file next to path: its digest is needed
	// before the layout can be written, and it may be too large for memory.
	layerFile, err := os.CreateTemp(filepath.Dir(path), ".layer-*.tar")
	if err != nil {
		return "", fmt.Errorf("creating layer of %s: %w", img.Ref, err)
	}
	defer func() {
		layerFile.Close()
		os.Remove(layerFile.Name())
	}()
	h := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(layerFile, h)}
	if err := WriteLayer(ctx, img, cw); err != nil {
		return "", fmt.Errorf("writing layer of %s: %w", img.Ref, err)
	}
	layer := descriptor{MediaType: mediaTypeLayer, Digest: "sha256:" + hex.EncodeToString(h.Sum(nil)), Size: cw.n}

	arch := img.Architecture
	if arch == "" {
		arch = runtime.GOARCH
	}
	config, err := json.Marshal(imageConfig{
		Architecture: arch,
		OS:           "linux",
		Config: containerConfig{
			User:       img.User,
			Env:        img.Env,
			Entrypoint: img.Entrypoint,
			Cmd:        img.Cmd,
			WorkingDir: img.WorkingDir,
			Labels:     img.Labels,
		},
		RootFS: rootFS{Type: "layers", DiffIDs: []string{layer.Digest}},
	})
	if err != nil {
		return "", err
	}
	configDesc := blobDescriptor(mediaTypeConfig, config)
	man, err := json.Marshal(manifest{
		SchemaVersion: 2,
		MediaType:     mediaTypeManifest,
		Config:        configDesc,
		Layers:        []descriptor{layer},
	})
	if err != nil {
		return "", err
	}
	manDesc := blobDescriptor(mediaTypeManifest, man)
	indexDesc := manDesc
	indexDesc.Platform = &platform{Architecture: arch, OS: "linux"}
	indexDesc.Annotations = map[string]string{annotationImageName: img.Ref, annotationRefName: refTag}
	idx, err := json.Marshal(index{SchemaVersion: 2, MediaType: mediaTypeIndex, Manifests: []descriptor{indexDesc}})
	if err != nil {
		return "", err
	}

	record := manDesc.Digest + "  " + img.Ref + "\n"
	if upToDate(path, record) {
		return manDesc.Digest, nil
	}
	if _, err := layerFile.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	err = writeAtomic(path, func(w io.Writer) error {
		lw := &layoutWriter{tw: tar.NewWriter(w)}
		lw.data("oci-layout", []byte(ociLayout))
		lw.data("index.json", idx)
		lw.dir("blobs/")
		lw.dir("blobs/sha256/")
		lw.data(blobPath(configDesc), config)
		lw.data(blobPath(manDesc), man)
		lw.file(blobPath(layer), layer.Size, layerFile)
		return lw.close()
	})
	if err != nil {
		return "", fmt.Errorf("writing image %s to %s: %w", img.Ref, path, err)
	}
	err = writeAtomic(path+digestSuffix, func(w io.Writer) error {
		_, err := io.WriteString(w, record)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("recording digest of %s: %w", path, err)
	}
	return manDesc.Digest, nil
}

// digestSuffix names the file next to a tarball that records its manifest
// digest and reference.
const digestSuffix = ".digest"

// upToDate reports whether the tarball at path exists and its digest file
// holds record. The reference is part of the record because it lives in
// index.json, outside the manifest that the digest covers.
func upToDate(path, record string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	recorded, err := os.ReadFile(path + digestSuffix)
	return err == nil && string(recorded) == record
}

// writeAtomic writes path through a temporary file in the same directory
// that is synced and renamed over path, so readers see the old or the new
// content, never a part.
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func blobDescriptor(mediaType string, b []byte) descriptor {
	sum := sha256.Sum256(b)
	return descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(b))}
}

func blobPath(d descriptor) string {
	return "blobs/sha256/" + strings.TrimPrefix(d.Digest, "sha256:")
}

// layoutWriter writes the entries of the layout tar and keeps the first
// error, so that a sequence of writes needs one check at the end.
type layoutWriter struct {
	tw  *tar.Writer
	err error
}

func (lw *layoutWriter) dir(name string) {
	if lw.err == nil {
		lw.err = lw.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: time.Unix(0, 0)})
	}
}

func (lw *layoutWriter) data(name string, b []byte) {
	lw.file(name, int64(len(b)), bytes.NewReader(b))
}

func (lw *layoutWriter) file(name string, size int64, r io.Reader) {
	if lw.err != nil {
		return
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: size, ModTime: time.Unix(0, 0)}
	if lw.err = lw.tw.WriteHeader(hdr); lw.err != nil {
		return
	}
	if _, err := io.CopyN(lw.tw, r, size); err != nil {
		lw.err = fmt.Errorf("writing %s: %w", name, err)
	}
}

func (lw *layoutWriter) close() error {
	if lw.err != nil {
		return lw.err
	}
	return lw.tw.Close()
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (cw *countingWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.n += int64(n)
	return n, err
}
