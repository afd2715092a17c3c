package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"
)

// noFollow makes an open fail on a symbolic link.
const noFollow = syscall.O_NOFOLLOW

// partialPrefix starts the name of a file being written; such files are
// never uploaded and are removed by sync and at the start of a download.
const partialPrefix = ".datacube-partial."

// partialPath returns the temporary path of a directory being built at
// final: the same parent, so that the rename is atomic.
func partialPath(final string) string {
	dir, base := filepath.Split(final)
	return filepath.Join(dir, partialPrefix+base)
}

// isPartial reports whether a file name is a temporary one of ours.
func isPartial(name string) bool { return strings.HasPrefix(name, partialPrefix) }

// atomicFile is a file written under a temporary name and renamed to its
// final name only when complete. The temporary name has a random suffix
// and is created exclusively without following links, so neither a link
// planted in the PVC nor a second writer of the same file can redirect or
// tear it.
type atomicFile struct {
	*os.File
	final string
	fsync bool
	// batch, when set, takes over the sync and the rename (see
	// commitBatch); fsync is then false.
	batch *commitBatch
}

// durable reports whether the file is synced before its rename, one by one
// or in a batch.
func (a *atomicFile) durable() bool { return a.fsync || a.batch != nil }

// createAtomic creates the directories of final and its temporary file.
func createAtomic(final string, fsync bool) (*atomicFile, error) {
	dir, base := filepath.Split(final)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating directory: %w", err)
	}
	if fi, err := os.Lstat(final); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s exists and is not a regular file", final)
	}
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return nil, err
	}
	tmp := filepath.Join(dir, partialPrefix+base+"."+hex.EncodeToString(suffix[:]))
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY|noFollow, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating temporary file: %w", err)
	}
	return &atomicFile{File: f, final: final, fsync: fsync}, nil
}

// Commit syncs and closes the file, sets its modification time, renames it
// to its final name and syncs the directory, so that the new name survives
// a crash. With a batch, the file is closed and handed to the batch, which
// syncs and renames it later.
func (a *atomicFile) Commit(mtime time.Time) error {
	var err error
	if a.fsync {
		err = a.Sync()
	}
	var size int64
	if a.batch != nil {
		var fi os.FileInfo
		if fi, err = a.Stat(); err == nil {
			size = fi.Size()
		}
	}
	err = errors.Join(err, a.Close())
	if err == nil && !mtime.IsZero() {
		err = os.Chtimes(a.Name(), mtime, mtime)
	}
	if err == nil && a.batch != nil {
		return a.batch.add(a.Name(), a.final, size)
	}
	if err == nil {
		err = os.Rename(a.Name(), a.final)
	}
	if err != nil {
		_ = os.Remove(a.Name())
		return fmt.Errorf("completing %s: %w", a.final, err)
	}
	if a.fsync {
		if err := syncDir(filepath.Dir(a.final)); err != nil {
			return fmt.Errorf("completing %s: %w", a.final, err)
		}
	}
	return nil
}

// Abort closes and removes the temporary file.
func (a *atomicFile) Abort() {
	_ = a.Close()
	_ = os.Remove(a.Name())
}

// syncDir fsyncs a directory.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// removePartials deletes the temporary files that killed attempts left
// below dir (links are not followed).
func removePartials(ctx context.Context, dir string) error {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !isPartial(d.Name()) {
			return nil
		}
		klog.FromContext(ctx).V(3).Info("Removing a partial file of an earlier attempt", "path", p)
		return os.Remove(p)
	})
	if err != nil {
		return fmt.Errorf("removing partial files of an earlier attempt: %w", err)
	}
	return nil
}

// uniquePaths fails when two names lead to the same local path (keys
// a//b and a/b, for example), which would have two writers of one file.
type uniquePaths map[string]string

// add records that name is written to p.
func (u uniquePaths) add(p, name string) error {
	if other, ok := u[p]; ok {
		return fmt.Errorf("%q and %q lead to the same file %s", other, name, p)
	}
	u[p] = name
	return nil
}
