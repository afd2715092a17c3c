// Command npmvendor copies files out of the npm packages a package-lock.json
// pins into a directory, so that the web console's front end is built from
// the npm registry without Node.js and embedded in its binary with nothing
// fetched at run time.
//
// package.json names, under the key "vendor", the files to take from each
// package and the name each gets in the output directory:
//
//	"vendor": {"preact": {"dist/preact.mjs": "preact.mjs", "LICENSE": "preact.LICENSE"}}
//
// The version and integrity of each package are package-lock.json's; a
// tarball whose digest is not the lockfile's is refused. Tarballs are kept
// in a cache directory keyed by their digest, so a second run reads no
// network.
//
// Usage:
//
//	npmvendor -dir pkg/console/web [-out pkg/console/web/vendor] [-registry URL] [-cache DIR]
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// maxTarball bounds a package tarball read from the registry.
const maxTarball = 64 << 20

// manifest is what npmvendor reads of package.json.
type manifest struct {
	// Vendor maps a package to its files: path in the package to the
	// name in the output directory.
	Vendor map[string]map[string]string `json:"vendor"`
}

// lockfile is what npmvendor reads of package-lock.json (version 2 or 3).
type lockfile struct {
	LockfileVersion int                  `json:"lockfileVersion"`
	Packages        map[string]lockEntry `json:"packages"`
}

type lockEntry struct {
	Version   string `json:"version"`
	Resolved  string `json:"resolved"`
	Integrity string `json:"integrity"`
}

func main() {
	dir := flag.String("dir", "", "the directory of package.json and package-lock.json")
	out := flag.String("out", "", "where the files go (default: DIR/vendor)")
	registry := flag.String("registry", envOr("NPM_CONFIG_REGISTRY", "https://registry.npmjs.org"), "the npm registry")
	cache := flag.String("cache", defaultCache(), "where tarballs are kept, by digest")
	flag.Parse()
	if *dir == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: npmvendor -dir DIR [-out DIR] [-registry URL] [-cache DIR]")
		os.Exit(2)
	}
	if *out == "" {
		*out = filepath.Join(*dir, "vendor")
	}
	v := vendorer{registry: strings.TrimSuffix(*registry, "/"), cache: *cache, client: &http.Client{Timeout: 2 * time.Minute}}
	if err := v.run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "npmvendor:", err)
		os.Exit(1)
	}
}

type vendorer struct {
	registry, cache string
	client          *http.Client
}

// run writes the files package.json's vendor names into out, which then
// holds those files only.
func (v vendorer) run(dir, out string) error {
	var m manifest
	if err := readJSON(filepath.Join(dir, "package.json"), &m); err != nil {
		return err
	}
	var lock lockfile
	if err := readJSON(filepath.Join(dir, "package-lock.json"), &lock); err != nil {
		return err
	}
	if lock.LockfileVersion < 2 {
		return fmt.Errorf("package-lock.json: lockfileVersion %d; want 2 or 3", lock.LockfileVersion)
	}
	files := map[string][]byte{}
	for _, name := range slices.Sorted(maps.Keys(m.Vendor)) {
		entry, ok := lock.Packages["node_modules/"+name]
		if !ok {
			return fmt.Errorf("package %s: not in package-lock.json", name)
		}
		tgz, err := v.tarball(name, entry)
		if err != nil {
			return fmt.Errorf("package %s@%s: %w", name, entry.Version, err)
		}
		got, err := extract(tgz, m.Vendor[name])
		if err != nil {
			return fmt.Errorf("package %s@%s: %w", name, entry.Version, err)
		}
		for to, b := range got {
			if _, dup := files[to]; dup {
				return fmt.Errorf("two files are named %s in the output", to)
			}
			files[to] = b
		}
	}
	return writeDir(out, files)
}

// tarball returns the package's tarball, from the cache or the registry,
// checked against the lockfile's integrity.
func (v vendorer) tarball(name string, e lockEntry) ([]byte, error) {
	algo, digest, err := parseIntegrity(e.Integrity)
	if err != nil {
		return nil, err
	}
	cached := filepath.Join(v.cache, algo+"-"+hex.EncodeToString(digest)+".tgz")
	if b, err := os.ReadFile(cached); err == nil && matches(b, digest) {
		return b, nil
	}
	url := e.Resolved
	if url == "" {
		// The registry's layout: @scope/name's tarball is
		// @scope/name/-/name-version.tgz.
		base := name[strings.LastIndex(name, "/")+1:]
		url = fmt.Sprintf("%s/%s/-/%s-%s.tgz", v.registry, name, base, e.Version)
	}
	resp, err := v.client.Get(url)
	if err != nil {
		return nil, fmt.Errorf("fetching the tarball: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxTarball+1))
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	if len(b) > maxTarball {
		return nil, fmt.Errorf("%s is over %d bytes", url, maxTarball)
	}
	if !matches(b, digest) {
		return nil, fmt.Errorf("%s does not match the lockfile's integrity %s", url, e.Integrity)
	}
	if err := os.MkdirAll(v.cache, 0o755); err == nil {
		_ = os.WriteFile(cached, b, 0o644) // a cache only: a failed write costs a fetch
	}
	return b, nil
}

// parseIntegrity reads a subresource-integrity string; npmvendor accepts
// sha512 only, what the registry publishes.
func parseIntegrity(s string) (algo string, digest []byte, err error) {
	for _, f := range strings.Fields(s) {
		if b64, ok := strings.CutPrefix(f, "sha512-"); ok {
			d, err := base64.StdEncoding.DecodeString(b64)
			if err != nil || len(d) != sha512.Size {
				return "", nil, fmt.Errorf("integrity %q: not a sha512 digest", s)
			}
			return "sha512", d, nil
		}
	}
	return "", nil, fmt.Errorf("integrity %q: no sha512 digest", s)
}

func matches(b, digest []byte) bool {
	sum := sha512.Sum512(b)
	return bytes.Equal(sum[:], digest)
}

// extract returns the files of the package tarball that want names: path
// in the package (under its top directory, "package/" by npm's
// convention) to the output name.
func extract(tgz []byte, want map[string]string) (map[string][]byte, error) {
	for from, to := range want {
		if to == "" || to != path.Base(to) || to == "." || to == ".." || strings.HasPrefix(to, ".") {
			return nil, fmt.Errorf("output name %q of %s: want a plain file name", to, from)
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, fmt.Errorf("reading the tarball: %w", err)
	}
	tr := tar.NewReader(zr)
	got := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the tarball: %w", err)
		}
		_, inPackage, ok := strings.Cut(h.Name, "/")
		to, wanted := want[inPackage]
		if !ok || !wanted || h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, maxTarball))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", h.Name, err)
		}
		got[to] = b
	}
	for from := range want {
		if _, ok := got[want[from]]; !ok {
			return nil, fmt.Errorf("no file %s in the package", from)
		}
	}
	return got, nil
}

// writeDir makes dir hold exactly files.
func writeDir(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	old, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, e := range old {
		if _, keep := files[e.Name()]; !keep {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("removing %s: %w", e.Name(), err)
			}
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

func readJSON(file string, v any) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// defaultCache is the tarball cache under the tools' cache.
func defaultCache() string {
	if d := os.Getenv("ACCELSTACK_CACHE"); d != "" {
		return filepath.Join(d, "npm")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "accelstack-npm")
	}
	return filepath.Join(d, "accelstack", "npm")
}
