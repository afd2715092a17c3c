// Command benchdoc runs accelstack's benchmarks and writes their results into
// docs/benchmarks.md, so that the page is regenerated rather than edited by
// hand. It runs the Go benchmarks of every package, then each bench program
// in test/bench/*, passing their output through to the terminal; each
// program prints markdown, which replaces the text between that program's
// markers in the page (<!-- begin bench NAME --> and <!-- end bench NAME -->).
// Each new section ends with the date and the machine it was measured on. A
// program that prints nothing (it skipped, e.g. without root) leaves its
// section as it was; one that fails leaves its section too, and benchdoc
// exits 1 after writing the others. Text outside the markers is kept.
//
// With -from DIR it runs nothing and reads the outputs from DIR instead
// (NAME.md per program, go-test.txt for the Go benchmarks), and -o - prints
// the page instead of writing it: together, a dry run of the regeneration.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// goTestSection is the section of the Go benchmarks (go test -bench).
const goTestSection = "go-test"

func main() {
	doc := flag.String("doc", "docs/benchmarks.md", "The page to regenerate.")
	out := flag.String("o", "", "Where to write the page; - for standard output (default: -doc).")
	from := flag.String("from", "", "Read the outputs from this directory instead of running the benchmarks.")
	benchDir := flag.String("bench-dir", "test/bench", "Directory of the bench programs, one per subdirectory.")
	flag.Parse()
	if *out == "" {
		*out = *doc
	}
	if err := run(*doc, *out, *from, *benchDir); err != nil {
		fmt.Fprintln(os.Stderr, "benchdoc:", err)
		os.Exit(1)
	}
}

func run(doc, out, from, benchDir string) error {
	page, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	programs, err := benchPrograms(benchDir)
	if err != nil {
		return err
	}
	var sections []section
	var failed error
	if from != "" {
		if _, err := os.Stat(from); err != nil {
			return err
		}
		sections, err = readOutputs(from, programs)
		if err != nil {
			return err
		}
	} else {
		sections, failed = runAll(benchDir, programs)
	}
	stamp := machine(time.Now())
	for i, s := range sections {
		if strings.TrimSpace(s.body) == "" {
			fmt.Fprintf(os.Stderr, "benchdoc: no output from %s: its section is kept as it was\n", s.name)
			continue
		}
		sections[i].body = strings.TrimRight(s.body, "\n") + "\n\n" + stamp
	}
	updated, err := splice(string(page), sections)
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	if out == "-" {
		_, err = io.WriteString(os.Stdout, updated)
	} else {
		err = os.WriteFile(out, []byte(updated), 0o644)
	}
	return errors.Join(err, failed)
}

// benchPrograms lists the bench programs: the subdirectories of dir.
func benchPrograms(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// runAll runs the Go benchmarks and every bench program, echoing their
// output, and returns their sections; a failed run has an empty section and
// its error is returned once everything has run.
func runAll(benchDir string, programs []string) ([]section, error) {
	var errs []error
	out, err := tee("go", "test", "-run", "^$", "-bench", ".", "-benchmem", "./...")
	if err != nil {
		errs = append(errs, fmt.Errorf("go test -bench: %w", err))
		out = nil
	}
	sections := []section{{name: goTestSection, body: goTestBody(string(out))}}
	for _, p := range programs {
		pkg := filepath.Join(benchDir, p)
		if !filepath.IsAbs(pkg) {
			pkg = "./" + filepath.ToSlash(pkg)
		}
		fmt.Println("=== go run " + pkg)
		out, err := tee("go", "run", pkg)
		if err != nil {
			errs = append(errs, fmt.Errorf("go run %s: %w", pkg, err))
			out = nil
		}
		sections = append(sections, section{name: p, body: string(out)})
	}
	return sections, errors.Join(errs...)
}

// tee runs a command with its output shown as it comes and returns its
// standard output.
func tee(name string, args ...string) ([]byte, error) {
	var buf bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout = io.MultiWriter(os.Stdout, &buf)
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	return buf.Bytes(), err
}

// readOutputs reads saved outputs from dir: go-test.txt and NAME.md per
// program; a missing file is an empty section.
func readOutputs(dir string, programs []string) ([]section, error) {
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		return string(b), err
	}
	goTest, err := read(goTestSection + ".txt")
	if err != nil {
		return nil, err
	}
	sections := []section{{name: goTestSection, body: goTestBody(goTest)}}
	for _, p := range programs {
		body, err := read(p + ".md")
		if err != nil {
			return nil, err
		}
		sections = append(sections, section{name: p, body: body})
	}
	return sections, nil
}

// goTestBody keeps the package, CPU and result lines of go test -bench
// output, in a text block; empty when there is no result.
func goTestBody(out string) string {
	var lines []string
	results := 0
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Benchmark"):
			results++
			lines = append(lines, l)
		case strings.HasPrefix(l, "pkg: "), strings.HasPrefix(l, "cpu: "):
			lines = append(lines, l)
		}
	}
	if results == 0 {
		return ""
	}
	return "```text\n" + strings.Join(lines, "\n") + "\n```\n"
}

// machine says when and on what machine the figures were measured.
func machine(now time.Time) string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kib int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kib); err == nil {
			mem = fmt.Sprintf(", %.1f GiB of memory", float64(kib)/(1<<20))
		}
	}
	return fmt.Sprintf("_Measured on %s: %d CPUs (%s)%s, %s on %s/%s._\n",
		now.UTC().Format("2006-01-02"), runtime.NumCPU(), cpu, mem, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
