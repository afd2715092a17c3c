package executor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// partialPrefix starts the name of a file being written; such files are
// never uploaded and are removed by sync.
const partialPrefix = ".datacube-partial."

// partialPath returns the temporary path of final while it is written: the
// same directory, so that the rename is atomic.
func partialPath(final string) string {
	dir, base := filepath.Split(final)
	return filepath.Join(dir, partialPrefix+base)
}

// isPartial reports whether a file name is a temporary one of ours.
func isPartial(name string) bool { return strings.HasPrefix(name, partialPrefix) }

// atomicFile is a file written under a temporary name and renamed to its
// final name only when complete. The temporary name is fixed, so a retried
// attempt overwrites what a killed one left.
type atomicFile struct {
	*os.File
	final string
	fsync bool
}

// createAtomic creates the directories of final and its temporary file.
func createAtomic(final string, fsync bool) (*atomicFile, error) {
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, fmt.Errorf("creating directory: %w", err)
	}
	if fi, err := os.Lstat(final); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s exists and is not a regular file", final)
	}
	f, err := os.OpenFile(partialPath(final), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating temporary file: %w", err)
	}
	return &atomicFile{File: f, final: final, fsync: fsync}, nil
}

// Commit syncs and closes the file, sets its modification time and renames
// it to its final name.
func (a *atomicFile) Commit(mtime time.Time) error {
	var err error
	if a.fsync {
		err = a.Sync()
	}
	err = errors.Join(err, a.Close())
	if err == nil && !mtime.IsZero() {
		err = os.Chtimes(a.Name(), mtime, mtime)
	}
	if err == nil {
		err = os.Rename(a.Name(), a.final)
	}
	if err != nil {
		_ = os.Remove(a.Name())
		return fmt.Errorf("completing %s: %w", a.final, err)
	}
	return nil
}

// Abort closes and removes the temporary file.
func (a *atomicFile) Abort() {
	_ = a.Close()
	_ = os.Remove(a.Name())
}
