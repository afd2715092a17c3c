package executor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCreateAtomicPlantedLink plants a symbolic link at the temporary name
// a file used to be written under and checks that writing the file
// neither follows it nor leaves anything but the final file.
func TestCreateAtomicPlantedLink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("untouched"), 0o644); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dir, "model.bin")
	if err := os.Symlink(outside, filepath.Join(dir, partialPrefix+"model.bin")); err != nil {
		t.Fatal(err)
	}
	for _, fsync := range []bool{true, false} {
		f, err := createAtomic(final, fsync)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("data"); err != nil {
			t.Fatal(err)
		}
		if err := f.Commit(time.Time{}); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(outside); string(b) != "untouched" {
			t.Fatalf("the write went through the planted link: %s = %q", outside, b)
		}
		if b, _ := os.ReadFile(final); string(b) != "data" {
			t.Errorf("%s = %q, want data", final, b)
		}
	}
	if fi, err := os.Lstat(final); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the final file is not a regular file: %v, %v", fi, err)
	}
}

// TestCreateAtomicTwoWriters writes one file twice at once: each writer has
// its own temporary file, so the file that ends up in place is one of the
// two complete versions, never a mix.
func TestCreateAtomicTwoWriters(t *testing.T) {
	final := filepath.Join(t.TempDir(), "f")
	a, err := createAtomic(final, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := createAtomic(final, false)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() == b.Name() {
		t.Fatalf("two writers share the temporary file %s", a.Name())
	}
	_, _ = a.WriteString(strings.Repeat("a", 10))
	_, _ = b.WriteString(strings.Repeat("b", 3))
	if err := a.Commit(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(final); string(got) != strings.Repeat("a", 10) {
		t.Errorf("after the first commit the file is %q", got)
	}
	if err := b.Commit(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(final); string(got) != "bbb" {
		t.Errorf("after the second commit the file is %q", got)
	}
}

// TestRemovePartials removes the partial files of killed attempts and
// nothing else, without following links.
func TestRemovePartials(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	files := []string{"keep.txt", "sub/" + partialPrefix + "x.1234", partialPrefix + "y", "sub/keep2"}
	for _, f := range files {
		p := filepath.Join(dir, f)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, partialPrefix+"z"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := removePartials(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"keep.txt", "sub/keep2", "link"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s was removed: %v", f, err)
		}
	}
	for _, f := range files[1:3] {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s is still there", f)
		}
	}
	if _, err := os.Lstat(filepath.Join(outside, partialPrefix+"z")); err != nil {
		t.Errorf("a partial file behind a link was removed: %v", err)
	}
	if err := removePartials(t.Context(), filepath.Join(dir, "missing")); err != nil {
		t.Errorf("removePartials of a missing directory: %v", err)
	}
}

// TestUniquePaths refuses two names of one file.
func TestUniquePaths(t *testing.T) {
	dir := t.TempDir()
	u := uniquePaths{}
	for _, rel := range []string{"a/b", "a//b"} {
		p, err := JoinRel(dir, rel)
		if err != nil {
			t.Fatal(err)
		}
		err = u.add(p, rel)
		if rel == "a/b" && err != nil {
			t.Fatal(err)
		}
		if rel == "a//b" && (err == nil || !strings.Contains(err.Error(), `"a/b" and "a//b" lead to the same file`)) {
			t.Errorf("add(a//b) = %v, want an error naming both", err)
		}
	}
}
