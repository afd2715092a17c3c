package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tgz is a package tarball of files, under npm's package/ directory.
func tgz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func integrity(b []byte) string {
	sum := sha512.Sum512(b)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// project writes package.json and package-lock.json for the package name
// at version 1.0.0 with the given integrity.
func project(t *testing.T, name, integrity string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("package.json", `{"dependencies": {"`+name+`": "1.0.0"}, "vendor": {"`+name+`": {"dist/lib.mjs": "lib.mjs", "LICENSE": "lib.LICENSE"}}}`)
	write("package-lock.json", `{"lockfileVersion": 3, "packages": {"node_modules/`+name+`": {"version": "1.0.0", "integrity": "`+integrity+`"}}}`)
	return dir
}

func TestVendor(t *testing.T) {
	t.Run("unscoped", func(t *testing.T) { testVendor(t, "lib", "/lib/-/lib-1.0.0.tgz") })
	// A scoped package's tarball is found at the registry's layout when
	// the lockfile records no resolved URL (npm's omit-lockfile-registry-resolved).
	t.Run("scoped", func(t *testing.T) { testVendor(t, "@scope/lib", "/@scope/lib/-/lib-1.0.0.tgz") })
}

func testVendor(t *testing.T, name, path string) {
	pkg := tgz(t, map[string]string{"dist/lib.mjs": "export const x = 1;\n", "LICENSE": "MIT\n", "src/other.js": "no"})
	fetches := 0
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches++
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(pkg)
	}))
	defer registry.Close()
	v := vendorer{registry: registry.URL, cache: t.TempDir(), client: registry.Client()}

	dir := project(t, name, integrity(pkg))
	out := filepath.Join(dir, "vendor")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "stale.mjs"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := v.run(dir, out); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "lib.LICENSE lib.mjs" {
		t.Errorf("vendor/ holds %v, want the two named files only", names)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "lib.mjs")); string(b) != "export const x = 1;\n" {
		t.Errorf("lib.mjs = %q", b)
	}
	// A second run reads the cache.
	if err := v.run(dir, out); err != nil || fetches != 1 {
		t.Errorf("second run: %v, %d fetches; want the cache's tarball", err, fetches)
	}

	// A tarball that is not the lockfile's is refused, and nothing written.
	other := project(t, name, integrity([]byte("something else")))
	err := v.run(other, filepath.Join(other, "vendor"))
	if err == nil || !strings.Contains(err.Error(), "does not match the lockfile's integrity") {
		t.Errorf("a tarball of another digest: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "vendor")); !os.IsNotExist(err) {
		t.Errorf("the refused run wrote vendor/: %v", err)
	}
}

func TestExtractRefuses(t *testing.T) {
	pkg := tgz(t, map[string]string{"dist/lib.mjs": "x"})
	for _, want := range []map[string]string{
		{"dist/lib.mjs": "../lib.mjs"},
		{"dist/lib.mjs": "sub/lib.mjs"},
		{"dist/lib.mjs": ".hidden"},
		{"dist/missing.mjs": "missing.mjs"},
	} {
		if _, err := extract(pkg, want); err == nil {
			t.Errorf("%v was accepted", want)
		}
	}
	for _, s := range []string{"", "sha1-AAAA", "sha512-short"} {
		if _, _, err := parseIntegrity(s); err == nil {
			t.Errorf("integrity %q was accepted", s)
		}
	}
}
