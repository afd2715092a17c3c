package cluster

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/internal/ociimage"
)

// DebianImage is an image whose root file system is Debian packages and
// the packages they depend on, unpacked with dpkg-deb: no maintainer
// script runs, no package manager is in the image, and documentation is
// left out. Dependencies are resolved by apt as for a system with nothing
// installed, without recommends, and then without the Essential packages
// (the shell, coreutils, dpkg and the like, which every Debian system has
// and no package declares) and Omit, with whatever only they need.
type DebianImage struct {
	// Ref is the image reference.
	Ref string
	// Packages are the packages asked for, each name or name=version,
	// where version is the upstream version or a prefix of it at a dot,
	// e.g. python3-torch=1.13.
	Packages []string
	// Omit are packages of the dependency closure that the image does
	// not need, left out with what only they need.
	Omit []string
	// Env holds the image's KEY=value pairs.
	Env []string
	// Files are files the packages' maintainer scripts would have written,
	// by absolute path, such as /etc/passwd, or programs of the image's
	// own: written after unpacking, 0644, or 0755 when the content starts
	// with "#!".
	Files map[string]string
}

// fileInputs returns img.Files as sorted path=content items, for the cache
// keys.
func (img DebianImage) fileInputs() []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(img.Files)) {
		out = append(out, p+"="+img.Files[p])
	}
	return out
}

// writeFiles writes img.Files under root.
func (img DebianImage) writeFiles(root string) error {
	for p, content := range img.Files {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return fmt.Errorf("image file %q: not a clean absolute path", p)
		}
		dst := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(content, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(dst, []byte(content), mode); err != nil {
			return err
		}
	}
	return nil
}

// debianImageFormat versions how a DebianImage becomes an image; changing
// the steps below means changing it, so that cached images are rebuilt.
const debianImageFormat = "debian-image/1"

// PackagesLabel is the image label holding the cache key of a
// DebianImage: a hash of its package list with versions.
const PackagesLabel = "dev.accelstack.debian-packages"

// packagesSuffix names the file next to an image archive that records
// what it was built from (a packagesRecord).
const packagesSuffix = ".packages"

// packagesRecord is what an image archive was built from: the hash of its
// definition and of apt's lists when it was last resolved, its cache key,
// and its packages.
type packagesRecord struct {
	inputs, key string
	packages    []string
}

func (r packagesRecord) write(path string) error {
	text := "inputs " + r.inputs + "\nkey " + r.key + "\n" + strings.Join(r.packages, "\n") + "\n"
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readPackagesRecord(path string) (packagesRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return packagesRecord{}, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "inputs ") || !strings.HasPrefix(lines[1], "key ") {
		return packagesRecord{}, fmt.Errorf("%s: not a package record", path)
	}
	return packagesRecord{
		inputs: strings.TrimPrefix(lines[0], "inputs "), key: strings.TrimPrefix(lines[1], "key "), packages: lines[2:],
	}, nil
}

// buildDebianImage writes img as an OCI archive at path, fetching the
// packages into cache, unless the archive there already holds the same
// packages at the same versions. It reports whether it built. Resolving
// takes apt several seconds, so it is skipped when neither img nor apt's
// lists changed since the archive was recorded.
func buildDebianImage(ctx context.Context, cache debianCache, img DebianImage, path string) (bool, error) {
	log := klog.FromContext(ctx).WithValues("image", img.Ref)
	start := time.Now()
	lists, err := cache.listsFingerprint(ctx)
	if err != nil {
		return false, err
	}
	inputs := packagesKey(nil, append(append(append(append([]string{debianImageFormat, img.Ref, lists}, img.Env...), img.Packages...), img.Omit...), img.fileInputs()...)...)
	have, _ := readPackagesRecord(path + packagesSuffix)
	_, statErr := os.Stat(path)
	if statErr == nil && have.inputs == inputs {
		return false, nil
	}
	pkgs, left, err := cache.resolve(ctx, img.Packages, img.Omit)
	if err != nil {
		return false, fmt.Errorf("resolving the packages of %s: %w", img.Ref, err)
	}
	rec := packagesRecord{inputs: inputs, key: packagesKey(pkgs, append(append([]string{debianImageFormat, img.Ref}, img.Env...), img.fileInputs()...)...)}
	for _, p := range pkgs {
		rec.packages = append(rec.packages, p.String())
	}
	if statErr == nil && have.key == rec.key {
		return false, rec.write(path + packagesSuffix)
	}
	log.Info("Building an image from Debian packages", "packages", len(pkgs), "leftOut", left)
	debs, err := cache.fetch(ctx, pkgs)
	if err != nil {
		return false, fmt.Errorf("fetching the packages of %s: %w", img.Ref, err)
	}
	log.Info("Packages fetched", "elapsed", time.Since(start).Round(time.Second).String())
	root, err := os.MkdirTemp(filepath.Dir(path), ".rootfs-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(root)
	if err := unpack(ctx, debs, root); err != nil {
		return false, fmt.Errorf("unpacking the packages of %s: %w", img.Ref, err)
	}
	if err := trimRootfs(root); err != nil {
		return false, err
	}
	if err := img.writeFiles(root); err != nil {
		return false, err
	}
	log.Info("Packages unpacked", "elapsed", time.Since(start).Round(time.Second).String())
	oi := ociimage.Image{Ref: img.Ref, Env: img.Env, Labels: map[string]string{PackagesLabel: rec.key}}
	if err := oi.AddTree(root, "/"); err != nil {
		return false, err
	}
	if _, err := ociimage.Write(ctx, oi, path); err != nil {
		return false, fmt.Errorf("writing %s: %w", img.Ref, err)
	}
	if err := rec.write(path + packagesSuffix); err != nil {
		return false, err
	}
	log.Info("Image written", "path", path, "elapsed", time.Since(start).Round(time.Second).String())
	return true, nil
}

// unpack extracts the packages into root, a few at a time, and then makes
// the links their maintainer scripts would register with
// update-alternatives.
func unpack(ctx context.Context, debs []string, root string) error {
	work := make(chan string)
	var (
		mu   sync.Mutex
		errs []error
		alts []alternative
		wg   sync.WaitGroup
	)
	for range max(2, runtime.NumCPU()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for deb := range work {
				err := extractDeb(ctx, deb, root)
				var a []alternative
				if err == nil {
					a, err = debAlternatives(ctx, deb)
				}
				mu.Lock()
				alts = append(alts, a...)
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}()
	}
	for _, deb := range debs {
		work <- deb
	}
	close(work)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return linkAlternatives(root, alts)
}

func extractDeb(ctx context.Context, deb, root string) error {
	if out, err := exec.CommandContext(ctx, "dpkg-deb", "--extract", deb, root).CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg-deb --extract %s: %w: %s", deb, err, out)
	}
	return nil
}

// debAlternatives returns the alternatives the postinst script of deb
// installs.
func debAlternatives(ctx context.Context, deb string) ([]alternative, error) {
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--ctrl-tarfile", deb)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var alts []alternative
	tr := tar.NewReader(out)
	for {
		hdr, err := tr.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				return nil, fmt.Errorf("reading the control files of %s: %w", deb, err)
			}
			break
		}
		if filepath.Clean(hdr.Name) == "postinst" {
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			alts = parseAlternatives(string(b))
		}
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("dpkg-deb --ctrl-tarfile %s: %w", deb, err)
	}
	return alts, nil
}

// alternative is a link that `update-alternatives --install` (or its
// --slave) makes: link points to path while that has the highest priority.
type alternative struct {
	link, path string
	priority   int
}

// parseAlternatives returns the alternatives a maintainer script installs
// with literal absolute paths; those built from shell variables are
// skipped.
func parseAlternatives(script string) []alternative {
	var alts []alternative
	sc := bufio.NewScanner(strings.NewReader(strings.ReplaceAll(script, "\\\n", " ")))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		for i := 0; i < len(f); i++ {
			if strings.TrimLeft(f[i], "(") != "update-alternatives" {
				continue
			}
			var prio int
		args:
			for j := i + 1; j < len(f); j++ {
				switch f[j] {
				case ";", "||", "&&", "|":
					break args
				case "--install":
					if j+4 < len(f) {
						if p, err := strconv.Atoi(unquote(f[j+4])); err == nil {
							prio = p
							alts = appendAlternative(alts, f[j+1], f[j+3], prio)
							j += 4
						}
					}
				case "--slave":
					if j+3 < len(f) {
						alts = appendAlternative(alts, f[j+1], f[j+3], prio)
						j += 3
					}
				}
			}
		}
	}
	return alts
}

func appendAlternative(alts []alternative, link, path string, prio int) []alternative {
	link, path = unquote(link), unquote(path)
	if !strings.HasPrefix(link, "/") || !strings.HasPrefix(path, "/") || strings.ContainsAny(link+path, "$`") {
		return alts
	}
	return append(alts, alternative{link: filepath.Clean(link), path: filepath.Clean(path), priority: prio})
}

func unquote(s string) string { return strings.Trim(s, `"'`) }

// linkAlternatives makes each link point at the path of its
// highest-priority alternative present in root, as update-alternatives
// would in automatic mode, but directly rather than through
// /etc/alternatives. A link the packages ship themselves is kept.
func linkAlternatives(root string, alts []alternative) error {
	best := map[string]alternative{}
	for _, a := range alts {
		if _, err := os.Lstat(filepath.Join(root, a.path)); err != nil {
			continue
		}
		if b, ok := best[a.link]; !ok || a.priority > b.priority {
			best[a.link] = a
		}
	}
	for _, a := range best {
		link := filepath.Join(root, a.link)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(a.path, link); err != nil {
			return err
		}
	}
	return nil
}

// trimmedDirs hold documentation and translations, which no workload
// reads; /usr/share/doc keeps each package's copyright file.
var trimmedDirs = []string{
	"usr/share/man", "usr/share/info", "usr/share/locale", "usr/share/lintian", "usr/share/bug", "usr/share/doc-base",
}

// trimRootfs removes the documentation from root.
func trimRootfs(root string) error {
	for _, d := range trimmedDirs {
		if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
			return err
		}
	}
	docs := filepath.Join(root, "usr", "share", "doc")
	entries, err := os.ReadDir(docs)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, pkg := range entries {
		if !pkg.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(docs, pkg.Name()))
		if err != nil {
			return err
		}
		for _, f := range files {
			if f.Name() != "copyright" {
				if err := os.RemoveAll(filepath.Join(docs, pkg.Name(), f.Name())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
