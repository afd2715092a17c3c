package executor

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// fuseSuperMagic is the f_type of FUSE file systems.
const fuseSuperMagic = 0x65735546

// Limits of a commitBatch: once this many files or bytes wait, they are
// synced and renamed, so that a crash loses at most this much work.
const (
	batchMaxFiles = 1000
	batchMaxBytes = 256 << 20
)

// commitBatch makes downloaded files durable in batches: a completed file
// waits under its temporary name; once enough wait, one syncfs of the
// destination file system writes all their data and inodes, and only then
// are they renamed to their final names. A name therefore never points to
// data that a crash could lose, as with an fsync per file, but a batch of
// a thousand small files costs one sync instead of two thousand. Close
// syncs the file system once more, which makes the renames durable; the
// transfer succeeds only after it.
//
// syncfs does not reach the daemon of a FUSE file system (it never gets
// an fsync request), so newCommitBatch returns nil there and files are
// synced one by one.
type commitBatch struct {
	// fs is a directory on the destination file system, the handle syncfs
	// takes.
	fs *os.File

	mu      sync.Mutex
	pending []pendingRename
	bytes   int64
	// syncs counts syncfs calls, for tests.
	syncs int
}

// pendingRename is a closed temporary file and its final name.
type pendingRename struct {
	tmp, final string
}

// newCommitBatch returns a batch for files below dir, or nil when dir is on
// a file system that syncfs does not make durable (FUSE).
func newCommitBatch(dir string) (*commitBatch, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", dir, err)
	}
	if st.Type == fuseSuperMagic {
		return nil, nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	return &commitBatch{fs: f}, nil
}

// add queues a closed temporary file for its rename to final, and syncs
// and renames the queue once it is full.
func (b *commitBatch) add(tmp, final string, size int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = append(b.pending, pendingRename{tmp: tmp, final: final})
	b.bytes += size
	if len(b.pending) >= batchMaxFiles || b.bytes >= batchMaxBytes {
		return b.flushLocked()
	}
	return nil
}

// Flush syncs and renames the files waiting.
func (b *commitBatch) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flushLocked()
}

func (b *commitBatch) flushLocked() error {
	if len(b.pending) == 0 {
		return nil
	}
	if err := b.syncLocked(); err != nil {
		return err
	}
	var errs []error
	for _, p := range b.pending {
		if err := os.Rename(p.tmp, p.final); err != nil {
			_ = os.Remove(p.tmp)
			errs = append(errs, fmt.Errorf("completing %s: %w", p.final, err))
		}
	}
	b.pending, b.bytes = nil, 0
	return errors.Join(errs...)
}

func (b *commitBatch) syncLocked() error {
	b.syncs++
	if err := unix.Syncfs(int(b.fs.Fd())); err != nil {
		return fmt.Errorf("syncing the file system of %s: %w", b.fs.Name(), err)
	}
	return nil
}

// Close syncs and renames the files waiting, then syncs the file system
// again so that the renames, and any deletes before, are durable.
func (b *commitBatch) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.flushLocked()
	if err == nil {
		err = b.syncLocked()
	}
	return errors.Join(err, b.fs.Close())
}

// Abort removes the temporary files still waiting; for a failed transfer.
func (b *commitBatch) Abort() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.pending {
		_ = os.Remove(p.tmp)
	}
	b.pending, b.bytes = nil, 0
	_ = b.fs.Close()
}
