package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCommitBatch checks that batched files keep their temporary names
// until a sync has run, that a full batch syncs and renames by itself, and
// that Close renames the rest and syncs once more.
func TestCommitBatch(t *testing.T) {
	dir := t.TempDir()
	b, err := newCommitBatch(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b == nil {
		t.Skip("the temporary directory is on FUSE, where files are synced one by one")
	}
	write := func(i int) string {
		final := filepath.Join(dir, fmt.Sprintf("f%04d", i))
		f, err := createAtomic(final, false)
		if err != nil {
			t.Fatal(err)
		}
		f.batch = b
		if _, err := f.WriteString("data"); err != nil {
			t.Fatal(err)
		}
		if err := f.Commit(time.Unix(1e9, 0)); err != nil {
			t.Fatal(err)
		}
		return final
	}
	first := write(0)
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Fatalf("%s is in place before any sync: %v", first, err)
	}
	for i := 1; i < batchMaxFiles; i++ {
		write(i)
	}
	if b.syncs != 1 {
		t.Errorf("syncs after a full batch = %d, want 1", b.syncs)
	}
	if fi, err := os.Stat(first); err != nil || !fi.ModTime().Equal(time.Unix(1e9, 0)) {
		t.Fatalf("%s after a full batch: %v, %v", first, fi, err)
	}
	last := write(batchMaxFiles)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if b.syncs != 3 {
		t.Errorf("syncs after Close = %d, want 3 (the full batch, the rest, the renames)", b.syncs)
	}
	if got, err := os.ReadFile(last); err != nil || string(got) != "data" {
		t.Errorf("%s after Close = %q, %v", last, got, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if isPartial(e.Name()) {
			t.Errorf("temporary file %s left", e.Name())
		}
	}
}

// TestCommitBatchAbort checks that a failed transfer leaves no temporary
// file and no final name for what was not synced.
func TestCommitBatchAbort(t *testing.T) {
	dir := t.TempDir()
	b, err := newCommitBatch(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b == nil {
		t.Skip("the temporary directory is on FUSE")
	}
	f, err := createAtomic(filepath.Join(dir, "f"), false)
	if err != nil {
		t.Fatal(err)
	}
	f.batch = b
	if err := f.Commit(time.Time{}); err != nil {
		t.Fatal(err)
	}
	b.Abort()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("left after Abort: %v", entries)
	}
}
