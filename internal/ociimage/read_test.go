package ociimage

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// smallImage is an image of inline files and links only, so its layer is
// known exactly.
func smallImage() Image {
	img := Image{
		Ref:        "registry.example.com/team/small:v1",
		Entrypoint: []string{"/usr/bin/app"},
		Env:        []string{"PATH=/usr/bin"},
		Labels:     map[string]string{"org.opencontainers.image.version": "v1.2.3"},
	}
	img.AddData("/usr/bin/app", []byte("#!/bin/sh\necho app\n"), 0o755)
	img.AddData("/etc/ssl/certs/ca.crt", []byte("cert\n"), 0o644)
	img.AddSymlink("/usr/bin/app2", "app")
	img.AddDir("/var/cache/app", 0o700)
	return img
}

func TestWriteLayerHoldsExactlyTheImagePaths(t *testing.T) {
	out := filepath.Join(t.TempDir(), "small.tar")
	digest, err := Write(context.Background(), smallImage(), out)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if a.Ref != "registry.example.com/team/small:v1" || a.Tag != "v1" || a.Digest != digest {
		t.Errorf("Read() = ref %q tag %q digest %s; want registry.example.com/team/small:v1, v1, %s", a.Ref, a.Tag, a.Digest, digest)
	}
	if !maps.Equal(a.Labels, smallImage().Labels) {
		t.Errorf("labels = %v, want %v", a.Labels, smallImage().Labels)
	}
	var got []string
	for _, e := range a.Layer {
		got = append(got, e.Path())
	}
	want := []string{
		"/etc", "/etc/group", "/etc/passwd", "/etc/ssl", "/etc/ssl/certs", "/etc/ssl/certs/ca.crt",
		"/tmp", "/usr", "/usr/bin", "/usr/bin/app", "/usr/bin/app2",
		"/var", "/var/cache", "/var/cache/app",
	}
	if !slices.Equal(got, want) {
		t.Errorf("layer holds\n%q\nwant\n%q", got, want)
	}

	// WriteLayer writes the very layer of the archive.
	var layer bytes.Buffer
	if err := WriteLayer(context.Background(), smallImage(), &layer); err != nil {
		t.Fatal(err)
	}
	l, err := read(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := sha256Digest(layer.Bytes()); d != l.manifest.Layers[0].Digest {
		t.Errorf("WriteLayer wrote a layer of digest %s, the archive holds %s", d, l.manifest.Layers[0].Digest)
	}
}

// rewriteArchive copies the archive at in to a new file, passing each
// member's name and content through change, and returns the new path.
func rewriteArchive(t *testing.T, in string, change func(name string, data []byte) []byte) string {
	t.Helper()
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, err := readTar(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := *e.Header
		data := change(hdr.Name, e.Data)
		hdr.Size = int64(len(data))
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "changed.tar")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReadRejects(t *testing.T) {
	good := filepath.Join(t.TempDir(), "small.tar")
	if _, err := Write(context.Background(), smallImage(), good); err != nil {
		t.Fatal(err)
	}
	l, err := read(good)
	if err != nil {
		t.Fatal(err)
	}
	layerPath := blobPath(l.manifest.Layers[0])
	configPath := blobPath(l.manifest.Config)
	editIndex := func(edit func(idx *index)) func(string, []byte) []byte {
		return func(name string, data []byte) []byte {
			if name != "index.json" {
				return data
			}
			var idx index
			if err := json.Unmarshal(data, &idx); err != nil {
				t.Fatal(err)
			}
			edit(&idx)
			b, err := json.Marshal(idx)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	tests := []struct {
		name    string
		change  func(name string, data []byte) []byte
		wantErr string
	}{
		{
			name: "layer content changed",
			change: func(name string, data []byte) []byte {
				if name == layerPath {
					data = bytes.Clone(data)
					data[len(data)/2] ^= 0xff
				}
				return data
			},
			wantErr: "blob " + l.manifest.Layers[0].Digest,
		},
		{
			name: "config changed",
			change: func(name string, data []byte) []byte {
				if name == configPath {
					return bytes.Replace(data, []byte("linux"), []byte("LINUX"), 1)
				}
				return data
			},
			wantErr: "blob " + l.manifest.Config.Digest,
		},
		{
			name:    "no ref name",
			change:  editIndex(func(idx *index) { delete(idx.Manifests[0].Annotations, annotationRefName) }),
			wantErr: annotationRefName,
		},
		{
			name:    "ref name not the tag",
			change:  editIndex(func(idx *index) { idx.Manifests[0].Annotations[annotationRefName] = "v2" }),
			wantErr: annotationRefName,
		},
		{
			name:    "no image name",
			change:  editIndex(func(idx *index) { delete(idx.Manifests[0].Annotations, annotationImageName) }),
			wantErr: annotationImageName,
		},
		{
			name:    "two manifests",
			change:  editIndex(func(idx *index) { idx.Manifests = append(idx.Manifests, idx.Manifests[0]) }),
			wantErr: "one manifest",
		},
		{
			name: "no oci-layout",
			change: func(name string, data []byte) []byte {
				if name == "oci-layout" {
					return []byte("{}")
				}
				return data
			},
			wantErr: "oci-layout",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(rewriteArchive(t, good, tt.change))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Read() error = %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
	// The unchanged copy reads.
	if _, err := Read(rewriteArchive(t, good, func(_ string, data []byte) []byte { return data })); err != nil {
		t.Errorf("Read() of an unchanged copy: %v", err)
	}
}
