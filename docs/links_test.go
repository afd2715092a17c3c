package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	// linkRE matches an inline markdown link or image and captures its target.
	linkRE = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// codeSpanRE matches an inline code span, whose text is not markdown.
	codeSpanRE = regexp.MustCompile("`[^`]*`")
	// headingRE matches an ATX heading and captures its text.
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// TestLinks checks that every relative link in README.md and docs/*.md
// points at a file that exists and, when it names an anchor, at a heading of
// that file.
func TestLinks(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "README.md"))
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = headingAnchors(string(b))
		return anchors[path]
	}
	links := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range pageLinks(string(b)) {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			links++
			file, anchor, _ := strings.Cut(l.target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				info, err := os.Stat(path)
				if err != nil {
					t.Errorf("%s:%d: link to %s: %v", page, l.line, l.target, err)
					continue
				}
				if info.IsDir() || filepath.Ext(path) != ".md" {
					if anchor != "" {
						t.Errorf("%s:%d: link to %s: an anchor in a file that is not markdown", page, l.line, l.target)
					}
					continue
				}
			}
			if anchor != "" && !anchorsOf(path)[anchor] {
				t.Errorf("%s:%d: link to %s: %s has no heading with anchor #%s", page, l.line, l.target, path, anchor)
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative link found: the test reads nothing")
	}
}

// link is one link target and the line it is on.
type link struct {
	target string
	line   int
}

// pageLinks returns the link targets of a markdown page, outside code
// blocks and code spans.
func pageLinks(page string) []link {
	var links []link
	fenced := false
	for i, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
			links = append(links, link{target: m[1], line: i + 1})
		}
	}
	return links
}

// headingAnchors returns the anchors GitHub gives the headings of a page:
// the text lower-cased, without code marks and punctuation, spaces as
// hyphens, and -1, -2, ... after repeats.
func headingAnchors(page string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		m := headingRE.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		a := slug(m[1])
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// slug turns heading text into its anchor as GitHub does.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"What is installed: test/cluster/manifests": "what-is-installed-testclustermanifests",
		"Static volumes (the StorageShim contract)": "static-volumes-the-storageshim-contract",
		"rclone's cache":                      "rclones-cache",
		"The embedded default: make run":      "the-embedded-default-make-run",
		"`make demo` and `make_test`":         "make-demo-and-make_test",
		"API group scheduler.tensorstack.dev": "api-group-schedulertensorstackdev",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
	got := headingAnchors("# A\n\n```\n# not a heading\n```\n## A\n### B\n")
	for _, want := range []string{"a", "a-1", "b"} {
		if !got[want] {
			t.Errorf("headingAnchors lacks %q: %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("headingAnchors took a line of a code block for a heading")
	}
}
