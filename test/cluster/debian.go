package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// debPackage is one binary package of a resolved set, with the fields of
// its Packages stanza that the image needs.
type debPackage struct {
	Name, Version, Arch string
	Essential           bool
	// Depends holds Pre-Depends and Depends, each a list of alternatives.
	Depends [][]string
	// Provides are the virtual packages it provides.
	Provides []string
}

// String is name=version:arch, the form the cache key and the image's
// package list use.
func (p debPackage) String() string { return p.Name + "=" + p.Version + ":" + p.Arch }

// debFile is the name apt gives the package's archive.
func (p debPackage) debFile() string {
	return p.Name + "_" + strings.ReplaceAll(p.Version, ":", "%3a") + "_" + p.Arch + ".deb"
}

// aptRequest is a requested package, name[=version prefix].
type aptRequest struct{ name, version string }

func parseRequest(s string) aptRequest {
	name, version, _ := strings.Cut(s, "=")
	return aptRequest{name, version}
}

// upstreamVersion is version without its epoch.
func upstreamVersion(version string) string {
	if _, v, ok := strings.Cut(version, ":"); ok {
		return v
	}
	return version
}

// versionMatches reports whether the upstream part of the Debian version
// is want or starts with it followed by a dot, plus or dash; any version
// matches an empty want.
func versionMatches(version, want string) bool {
	v := upstreamVersion(version)
	if want == "" || v == want {
		return true
	}
	return strings.HasPrefix(v, want) && strings.ContainsRune(".+-~", rune(v[len(want)]))
}

// instLine matches what `apt-get install --simulate` prints per package:
// Inst libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [amd64]) [].
var instLine = regexp.MustCompile(`^Inst (\S+) \((\S+) .*\[([^\]]+)\]\)`)

// parseSimulation returns name=version:arch of each package a simulated
// install would unpack.
func parseSimulation(out []byte) []debPackage {
	var pkgs []debPackage
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := instLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name, _, _ := strings.Cut(m[1], ":")
		pkgs = append(pkgs, debPackage{Name: name, Version: m[2], Arch: m[3]})
	}
	return pkgs
}

// parseStanzas reads the Packages stanzas that apt-cache show prints into
// packages by name; a package shown twice (two sources of one version)
// counts once.
func parseStanzas(out []byte) (map[string]debPackage, error) {
	pkgs := map[string]debPackage{}
	for _, stanza := range strings.Split(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n\n") {
		fields := map[string]string{}
		var last string
		for _, line := range strings.Split(stanza, "\n") {
			switch {
			case line == "":
			case line[0] == ' ' || line[0] == '\t':
				if last != "" {
					fields[last] += " " + strings.TrimSpace(line)
				}
			default:
				k, v, ok := strings.Cut(line, ":")
				if !ok {
					return nil, fmt.Errorf("malformed stanza line %q", line)
				}
				last = k
				fields[k] = strings.TrimSpace(v)
			}
		}
		if fields["Package"] == "" {
			continue
		}
		p := debPackage{
			Name: fields["Package"], Version: fields["Version"], Arch: fields["Architecture"],
			Essential: fields["Essential"] == "yes",
		}
		for _, f := range []string{"Pre-Depends", "Depends"} {
			p.Depends = append(p.Depends, parseRelations(fields[f])...)
		}
		for _, alts := range parseRelations(fields["Provides"]) {
			p.Provides = append(p.Provides, alts...)
		}
		pkgs[p.Name] = p
	}
	return pkgs, nil
}

// parseRelations parses a relationship field ("a (>= 1) | b:any, c") into
// its groups of alternative package names.
func parseRelations(field string) [][]string {
	var groups [][]string
	for _, g := range strings.Split(field, ",") {
		var alts []string
		for _, a := range strings.Split(g, "|") {
			a = strings.TrimSpace(a)
			if i := strings.IndexAny(a, " ([<"); i >= 0 {
				a = a[:i]
			}
			a, _, _ = strings.Cut(a, ":")
			if a != "" {
				alts = append(alts, a)
			}
		}
		if len(alts) > 0 {
			groups = append(groups, alts)
		}
	}
	return groups
}

// closure returns the packages of set that roots need: those reached from
// the roots through dependencies, each satisfied by the first alternative
// (by name, or by a package providing it) that set holds, without going
// through Essential packages, which every Debian system has and nothing
// declares a need for, nor through the omitted ones. It also returns the
// packages of set it left out.
func closure(set map[string]debPackage, roots, omit []string) (keep []debPackage, left []string, err error) {
	providers := map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		for _, v := range set[name].Provides {
			providers[v] = append(providers[v], name)
		}
	}
	resolve := func(alt string) (string, bool) {
		if _, ok := set[alt]; ok {
			return alt, true
		}
		if p := providers[alt]; len(p) > 0 {
			return p[0], true
		}
		return "", false
	}
	skip := map[string]bool{}
	for _, o := range omit {
		skip[o] = true
	}
	seen := map[string]bool{}
	queue := []string{}
	for _, r := range roots {
		if _, ok := set[r]; !ok {
			return nil, nil, fmt.Errorf("package %s is not in the resolved set", r)
		}
		if skip[r] {
			return nil, nil, fmt.Errorf("package %s is both asked for and omitted", r)
		}
		if !seen[r] {
			seen[r] = true
			queue = append(queue, r)
		}
	}
	for len(queue) > 0 {
		p := set[queue[0]]
		queue = queue[1:]
		keep = append(keep, p)
		for _, alts := range p.Depends {
			for _, a := range alts {
				name, ok := resolve(a)
				if !ok {
					continue
				}
				if !seen[name] && !skip[name] && !set[name].Essential {
					seen[name] = true
					queue = append(queue, name)
				}
				break
			}
		}
	}
	for name := range set {
		if !seen[name] {
			left = append(left, name)
		}
	}
	sort.Slice(keep, func(i, j int) bool { return keep[i].Name < keep[j].Name })
	sort.Strings(left)
	return keep, left, nil
}

// aptOptions make apt resolve for an empty system with no recommends, and
// fetch into the cache, leaving the host's own state alone.
func aptOptions(status string) []string {
	return []string{
		"-o", "Dir::State::status=" + status,
		"-o", "Debug::NoLocking=1",
		"-o", "APT::Install-Recommends=false",
		"-o", "APT::Install-Suggests=false",
		"-o", "APT::Sandbox::User=root",
	}
}

// apt runs an apt program with args in dir and returns its standard output.
func apt(ctx context.Context, dir, prog string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", prog, strings.Join(args, " "), err, lastLines(stderr.Bytes(), 10))
	}
	return out, nil
}

// debianCache is where Debian packages are resolved and fetched: an empty
// dpkg status that apt resolves against and the downloaded archives.
type debianCache struct{ dir string }

func (d debianCache) status() string   { return filepath.Join(d.dir, "status") }
func (d debianCache) archives() string { return filepath.Join(d.dir, "archives") }

func (d debianCache) init() error {
	if err := os.MkdirAll(d.archives(), 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(d.status()); errors.Is(err, os.ErrNotExist) {
		return os.WriteFile(d.status(), nil, 0o644)
	}
	return nil
}

// resolve returns the packages apt would install for reqs on a system with
// nothing installed, less Essential packages and omit and what only they
// need, and checks the requested version prefixes. When apt knows no
// candidate for a package, its lists are updated once and resolution tried
// again.
func (d debianCache) resolve(ctx context.Context, reqs, omit []string) (keep []debPackage, left []string, err error) {
	if err := d.init(); err != nil {
		return nil, nil, err
	}
	var names []string
	for _, r := range reqs {
		names = append(names, parseRequest(r).name)
	}
	simulate := func() ([]byte, error) {
		return apt(ctx, d.dir, "apt-get", append(append([]string{"install", "--simulate", "--no-install-recommends"}, aptOptions(d.status())...), names...)...)
	}
	out, err := simulate()
	if err != nil {
		if _, uerr := apt(ctx, d.dir, "apt-get", "update"); uerr != nil {
			return nil, nil, fmt.Errorf("%w; apt-get update: %w", err, uerr)
		}
		if out, err = simulate(); err != nil {
			return nil, nil, err
		}
	}
	sim := parseSimulation(out)
	if len(sim) == 0 {
		return nil, nil, fmt.Errorf("apt-get resolved no package for %s", strings.Join(names, " "))
	}
	args := []string{"show", "--no-all-versions"}
	for _, p := range sim {
		args = append(args, p.Name+"="+p.Version)
	}
	out, err = apt(ctx, d.dir, "apt-cache", args...)
	if err != nil {
		return nil, nil, err
	}
	set, err := parseStanzas(out)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range reqs {
		r := parseRequest(r)
		p, ok := set[r.name]
		if !ok {
			return nil, nil, fmt.Errorf("apt-cache shows no %s", r.name)
		}
		if !versionMatches(p.Version, r.version) {
			return nil, nil, fmt.Errorf("the package lists have %s %s, not %s", r.name, p.Version, r.version)
		}
	}
	return closure(set, names, omit)
}

// fetch downloads the archives of pkgs that the cache lacks and returns
// the path of each.
func (d debianCache) fetch(ctx context.Context, pkgs []debPackage) ([]string, error) {
	var missing []string
	paths := make([]string, len(pkgs))
	for i, p := range pkgs {
		paths[i] = filepath.Join(d.archives(), p.debFile())
		if _, err := os.Stat(paths[i]); errors.Is(err, os.ErrNotExist) {
			missing = append(missing, p.Name+"="+p.Version)
		}
	}
	if len(missing) == 0 {
		return paths, nil
	}
	tmp, err := os.MkdirTemp(d.dir, "download-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if _, err := apt(ctx, tmp, "apt-get", append(append([]string{"download"}, aptOptions(d.status())...), missing...)...); err != nil {
		return nil, err
	}
	for i, p := range paths {
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := os.Rename(filepath.Join(tmp, pkgs[i].debFile()), p); err != nil {
			return nil, fmt.Errorf("apt-get download gave no %s: %w", pkgs[i].debFile(), err)
		}
	}
	return paths, nil
}

// listsFingerprint identifies the state of apt's package lists: the name,
// size and modification time of each file, which apt-get update changes
// when the archive did.
func (d debianCache) listsFingerprint(ctx context.Context) (string, error) {
	out, err := apt(ctx, "", "apt-config", "shell", "L", "Dir::State::lists/d")
	if err != nil {
		return "", err
	}
	dir := strings.Trim(strings.TrimSpace(strings.TrimPrefix(string(out), "L=")), "'")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("reading apt's lists: %w", err)
	}
	h := sha256.New()
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || e.Name() == "lock" {
			continue
		}
		fmt.Fprintf(h, "%s %d %d\n", e.Name(), fi.Size(), fi.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// packagesKey is the cache key of an image made of pkgs: a hash of its
// sorted package list with versions and of the other inputs of the image.
func packagesKey(pkgs []debPackage, inputs ...string) string {
	lines := make([]string, 0, len(pkgs)+len(inputs))
	for _, p := range pkgs {
		lines = append(lines, p.String())
	}
	sort.Strings(lines)
	h := sha256.New()
	for _, l := range append(inputs, lines...) {
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}
