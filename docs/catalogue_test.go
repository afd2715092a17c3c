package docs

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// root is the repository root, seen from this package's directory.
const root = ".."

// TestE2ECatalogue checks that the table of docs/development.md "End-to-end
// tests" lists every test that make test-e2e runs with the e2e build tag
// (./test/e2e/... and ./test/cluster/...), and nothing else.
func TestE2ECatalogue(t *testing.T) {
	listed := firstColumn(t, "development.md", "### End-to-end tests")
	var found []string
	for _, dir := range []string{"test/e2e", "test/cluster"} {
		found = append(found, e2eTests(t, filepath.Join(root, dir))...)
	}
	if len(found) == 0 {
		t.Fatal("no e2e test found: the test reads nothing")
	}
	compare(t, "e2e test", found, listed, "the table of docs/development.md \"End-to-end tests\"")
}

// TestComponentsTable checks that README.md's Components table has a row
// for every binary in cmd/, and none for a binary that is not there.
func TestComponentsTable(t *testing.T) {
	listed := firstColumn(t, filepath.Join(root, "README.md"), "## Components")
	binaries := subdirs(t, filepath.Join(root, "cmd"))
	if len(binaries) == 0 {
		t.Fatal("cmd/ has no directory: the test reads nothing")
	}
	compare(t, "binary in cmd/", binaries, listed, "README.md's Components table")
}

// TestLayout checks that the tables of docs/development.md "Layout" name
// every top-level directory of the repository (hidden and ignored ones
// aside), every directory of pkg/, and every directory of pkg/ and cmd/
// holding Go files; and that every path they name exists.
func TestLayout(t *testing.T) {
	listed := firstColumn(t, "development.md", "## Layout")
	have := map[string]bool{}
	for _, p := range listed {
		have[strings.TrimSuffix(p, "/")] = true
	}
	var want []string
	ignored := gitignored(t)
	for _, d := range subdirs(t, root) {
		if !strings.HasPrefix(d, ".") && !ignored(d) {
			want = append(want, d)
		}
	}
	for _, d := range subdirs(t, filepath.Join(root, "pkg")) {
		want = append(want, "pkg/"+d)
	}
	for _, top := range []string{"pkg", "cmd"} {
		want = append(want, goPackageDirs(t, top)...)
	}
	seen := map[string]bool{}
	for _, d := range want {
		if !have[d] && !seen[d] {
			t.Errorf("%s is not in docs/development.md \"Layout\": add a row saying what it holds", d)
		}
		seen[d] = true
	}
	for _, p := range listed {
		if strings.ContainsAny(p, "<*") {
			continue // a pattern, such as cmd/<binary>
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Errorf("docs/development.md \"Layout\" names %s, which does not exist: %v", p, err)
		}
	}
}

// compare reports each name of want missing from listed, and each name of
// listed that is not in want.
func compare(t *testing.T, what string, want, listed []string, where string) {
	t.Helper()
	in := func(names []string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	w, l := in(want), in(listed)
	for _, n := range sorted(w) {
		if !l[n] {
			t.Errorf("%s %s is missing from %s", what, n, where)
		}
	}
	for _, n := range sorted(l) {
		if !w[n] {
			t.Errorf("%s lists %s, which is no %s", where, n, what)
		}
	}
}

func sorted(m map[string]bool) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// codeRE matches an inline code span and captures its text.
var codeRE = regexp.MustCompile("`([^`]+)`")

// firstColumn returns the code spans in the first column of the tables
// under heading in the markdown file at path, up to the next heading of
// the same or a higher level.
func firstColumn(t *testing.T, path, heading string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text, ok := section(string(b), heading)
	if !ok {
		t.Fatalf("%s has no heading %q", path, heading)
	}
	var spans []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cell, _, _ := strings.Cut(line[1:], "|")
		for _, m := range codeRE.FindAllStringSubmatch(cell, -1) {
			spans = append(spans, m[1])
		}
	}
	if len(spans) == 0 {
		t.Fatalf("%s %q has no table naming anything in code", path, heading)
	}
	return spans
}

// section returns the lines of page from the line heading (a whole ATX
// heading line, e.g. "## Layout") to the next heading of the same or a
// higher level, outside code blocks.
func section(page, heading string) (string, bool) {
	level := strings.IndexFunc(heading, func(r rune) bool { return r != '#' })
	var out []string
	in, fenced := false, false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			l := strings.IndexFunc(line, func(r rune) bool { return r != '#' })
			if in && l > 0 && l <= level {
				break
			}
			if strings.TrimSpace(line) == heading {
				in = true
			}
		}
		if in {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n"), in
}

// subdirs returns the names of the directories in dir.
func subdirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// gitignored returns whether a top-level name matches a pattern of the
// repository's .gitignore: one anchored to the root (/bin/) or one without
// a slash (*.test). Build outputs such as bin/ are no part of the layout.
func gitignored(t *testing.T) func(name string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var patterns []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "!") {
			continue
		}
		p := strings.TrimSuffix(line, "/")
		if rest, ok := strings.CutPrefix(p, "/"); ok {
			p = rest
		}
		if !strings.Contains(p, "/") {
			patterns = append(patterns, p)
		}
	}
	return func(name string) bool {
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}
}

// goPackageDirs returns the directories under top (relative to the root,
// slash-separated) that hold Go files, testdata aside.
func goPackageDirs(t *testing.T, top string) []string {
	t.Helper()
	dirs := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			dirs[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sorted(dirs)
}

// e2eTests returns the names of the test functions in the _test.go files
// under dir that build only with the e2e tag.
func e2eTests(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if !e2eOnly(f) {
			return nil
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && isTest(fn) {
				names = append(names, fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// e2eOnly reports whether f's //go:build line admits it with the e2e tag
// and not without it.
func e2eOnly(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			with := func(e2e bool) bool {
				return expr.Eval(func(tag string) bool {
					return tag == runtime.GOOS || tag == runtime.GOARCH || tag == "unix" || (e2e && tag == "e2e")
				})
			}
			return with(true) && !with(false)
		}
	}
	return false
}

// isTest reports whether fn is a test go test runs: func TestXxx(*testing.T).
func isTest(fn *ast.FuncDecl) bool {
	name := fn.Name.Name
	if fn.Recv != nil || !strings.HasPrefix(name, "Test") {
		return false
	}
	if r, _ := utf8.DecodeRuneInString(name[len("Test"):]); unicode.IsLower(r) {
		return false
	}
	params := fn.Type.Params.List
	if len(params) != 1 || len(params[0].Names) > 1 {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}

func TestSection(t *testing.T) {
	page := "# Top\n## A\n| `a` |\n### A.1\n| `b` |\n```\n## not a heading\n```\n| `c` |\n## B\n| `d` |\n"
	got, ok := section(page, "## A")
	if !ok || !strings.Contains(got, "`a`") || !strings.Contains(got, "`b`") || !strings.Contains(got, "`c`") || strings.Contains(got, "`d`") {
		t.Errorf("section(## A) = %q, %v; want A and A.1 up to B", got, ok)
	}
	got, _ = section(page, "### A.1")
	if strings.Contains(got, "`a`") || !strings.Contains(got, "`c`") || strings.Contains(got, "`d`") {
		t.Errorf("section(### A.1) = %q; want A.1 up to B", got)
	}
}

func TestE2EOnly(t *testing.T) {
	for src, want := range map[string]bool{
		"//go:build e2e\n\npackage p\n":                 true,
		"//go:build e2e && linux\n\npackage p\n":        runtime.GOOS == "linux",
		"//go:build !e2e\n\npackage p\n":                false,
		"//go:build linux\n\npackage p\n":               false,
		"package p\n":                                   false,
		"// a comment\n\n//go:build e2e\n\npackage p\n": true,
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x_test.go", src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if got := e2eOnly(f); got != want {
			t.Errorf("e2eOnly(%q) = %v, want %v", src, got, want)
		}
	}
}
