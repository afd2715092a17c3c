package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplice(t *testing.T) {
	const page = "# Benchmarks\n\nProse.\n\n## csi\n\nMethod.\n\n<!-- begin bench csi -->\nold table\n<!-- end bench csi -->\n\nAfter.\n"
	testCases := []struct {
		name     string
		sections []section
		want     string
		wantErr  string
	}{
		{
			name:     "replaces between the markers and keeps the prose",
			sections: []section{{name: "csi", body: "| a |\n|---|\n| 1 |\n"}},
			want:     "# Benchmarks\n\nProse.\n\n## csi\n\nMethod.\n\n<!-- begin bench csi -->\n| a |\n|---|\n| 1 |\n<!-- end bench csi -->\n\nAfter.\n",
		},
		{
			name:     "an empty body keeps the section",
			sections: []section{{name: "csi", body: " \n"}},
			want:     page,
		},
		{
			name:     "a new program is appended under its name",
			sections: []section{{name: "new", body: "figures"}},
			want:     page + "\n## new\n\n<!-- begin bench new -->\nfigures\n<!-- end bench new -->\n",
		},
		{
			name:     "an end marker alone is an error",
			sections: []section{{name: "x", body: "figures"}},
			wantErr:  "without",
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			in := page
			if tc.wantErr != "" {
				in += "<!-- end bench x -->\n"
			}
			got, err := splice(in, tc.sections)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("splice error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("splice (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGoTestBody(t *testing.T) {
	out := "goos: linux\ngoarch: amd64\npkg: example.com/nvidia\ncpu: Some CPU\nBenchmarkAllocate-2   \t  1000\t  1234 ns/op\nPASS\nok  \texample.com/nvidia\t1.2s\n?   \texample.com/other\t[no test files]\n"
	want := "```text\npkg: example.com/nvidia\ncpu: Some CPU\nBenchmarkAllocate-2   \t  1000\t  1234 ns/op\n```\n"
	if got := goTestBody(out); got != want {
		t.Errorf("goTestBody = %q, want %q", got, want)
	}
	if got := goTestBody("PASS\n"); got != "" {
		t.Errorf("goTestBody without results = %q, want empty", got)
	}
}

// TestDryRun regenerates a copy of the real page from fake outputs, as
// make bench would from real ones: every bench program has its section in
// the page, a program with output replaces its section, and one without
// output leaves it as it was.
func TestDryRun(t *testing.T) {
	root := filepath.Join("..", "..")
	doc := filepath.Join(root, "docs", "benchmarks.md")
	benchDir := filepath.Join(root, "test", "bench")
	page, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	programs, err := benchPrograms(benchDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(programs) == 0 {
		t.Fatal("no bench program found")
	}
	for _, p := range append([]string{goTestSection}, programs...) {
		if strings.Count(string(page), beginMarker(p)) != 1 || strings.Count(string(page), endMarker(p)) != 1 {
			t.Errorf("docs/benchmarks.md lacks one pair of markers for %s", p)
		}
	}

	from := t.TempDir()
	fake := map[string]string{}
	for _, p := range programs[1:] {
		fake[p] = "| fake " + p + " |\n|---|\n| 1 |\n"
		if err := os.WriteFile(filepath.Join(from, p+".md"), []byte(fake[p]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "benchmarks.md")
	if err := run(doc, out, from, benchDir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for p, body := range fake {
		if !strings.Contains(string(got), beginMarker(p)+"\n"+body+"\n_Measured on ") {
			t.Errorf("section %s was not replaced by its fake output:\n%s", p, got)
		}
	}
	kept := programs[0]
	if sectionText(string(got), kept) != sectionText(string(page), kept) {
		t.Errorf("section %s changed although its program printed nothing", kept)
	}
}

// sectionText returns the text between the markers of name.
func sectionText(page, name string) string {
	_, rest, _ := strings.Cut(page, beginMarker(name))
	body, _, _ := strings.Cut(rest, endMarker(name))
	return body
}
