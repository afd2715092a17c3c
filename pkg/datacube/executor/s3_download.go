package executor

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"
	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// downloadItem is an object and the local path it is written to.
type downloadItem struct {
	Obj  minio.ObjectInfo
	Rel  string
	Path string
}

// copyBufSize is the size of each copy buffer; memory use is about
// Concurrency times this, whatever the part size.
const copyBufSize = 256 << 10

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// Download copies the S3 location to the directory dst: an object to
// dst/<its base name>, a prefix's objects to their paths below dst. Keys
// that would leave dst are refused before anything is written. A local file
// with the object's size and modification time is skipped; each file is
// written under a temporary name, synced and renamed, and gets the object's
// modification time. With sync, files below dst that the prefix does not
// hold are deleted.
func (s *s3Side) Download(ctx context.Context, dst string, sync, fsync bool, c *Counter) error {
	single := false
	prefix := s.loc.Key
	if !s.loc.IsPrefix() {
		_, err := s.client.StatObject(ctx, s.loc.Bucket, s.loc.Key, minio.StatObjectOptions{})
		switch {
		case err == nil:
			single = true
		case minio.ToErrorResponse(err).Code == "NoSuchKey" || minio.ToErrorResponse(err).StatusCode == 404:
			prefix += "/"
		default:
			return fmt.Errorf("reading s3://%s/%s: %w", s.loc.Bucket, s.loc.Key, describeS3Error(err))
		}
	}
	objs, err := s.list(ctx, prefix, single)
	if err != nil {
		return err
	}
	if single {
		prefix = s.loc.Key[:strings.LastIndex(s.loc.Key, "/")+1]
	}
	if err := checkSyncSource(sync, s.allowEmpty, len(objs), "s3://"+s.loc.Bucket+"/"+prefix); err != nil {
		return err
	}
	items := make([]downloadItem, 0, len(objs))
	seen := uniquePaths{}
	for key, o := range objs {
		rel := strings.TrimPrefix(key, prefix)
		p, err := JoinRel(dst, rel)
		if err == nil {
			err = seen.add(p, key)
		}
		if err != nil {
			return fmt.Errorf("refusing object s3://%s/%s: %w", s.loc.Bucket, key, err)
		}
		items = append(items, downloadItem{Obj: o, Rel: rel, Path: p})
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dst, err)
	}
	if err := removePartials(ctx, dst); err != nil {
		return err
	}
	var batch *commitBatch
	if fsync {
		b, err := newCommitBatch(dst)
		if err != nil {
			return err
		}
		if b != nil {
			batch, fsync = b, false
			defer batch.Abort() // after Close, a no-op
		}
	}
	var small, large []downloadItem
	for _, it := range items {
		if fi, err := os.Lstat(it.Path); err == nil && fi.Mode().IsRegular() && fi.Size() == it.Obj.Size && fi.ModTime().Equal(it.Obj.LastModified) {
			c.Skip()
			continue
		}
		if it.Obj.Size > s.partSize {
			large = append(large, it)
		} else {
			small = append(small, it)
		}
	}
	klog.FromContext(ctx).Info("Downloading", "bucket", s.loc.Bucket, "prefix", prefix, "files", len(small)+len(large), "skipped", len(items)-len(small)-len(large))
	if err := forEach(ctx, s.numThreads, small, func(ctx context.Context, it downloadItem) error {
		return s.get(ctx, dst, it, 1, fsync, batch, c)
	}); err != nil {
		return err
	}
	for _, it := range large {
		if err := s.get(ctx, dst, it, s.numThreads, fsync, batch, c); err != nil {
			return err
		}
	}
	if batch != nil {
		if err := batch.Flush(); err != nil {
			return err
		}
	}
	if sync && !single {
		keep := make(map[string]bool, len(items))
		for _, it := range items {
			keep[it.Path] = true
		}
		if err := deleteExtra(ctx, dst, keep, c); err != nil {
			return err
		}
	}
	if batch != nil {
		return batch.Close()
	}
	return nil
}

// get downloads one object in parts of the part size, threads at a time,
// each written at its offset of the temporary file; batch, when not nil,
// syncs and renames it.
func (s *s3Side) get(ctx context.Context, dst string, it downloadItem, threads int, fsync bool, batch *commitBatch, c *Counter) error {
	if err := checkNoEscape(dst, it.Path); err != nil {
		return err
	}
	f, err := createAtomic(it.Path, fsync)
	if err != nil {
		return fmt.Errorf("writing %s: %w", it.Rel, err)
	}
	f.batch = batch
	size := it.Obj.Size
	var offsets []int64
	for off := int64(0); off < size; off += s.partSize {
		offsets = append(offsets, off)
	}
	if size > s.partSize {
		if err := f.Truncate(size); err != nil {
			f.Abort()
			return fmt.Errorf("writing %s: %w", it.Rel, err)
		}
	}
	err = forEach(ctx, threads, offsets, func(ctx context.Context, off int64) error {
		end := min(off+s.partSize, size) - 1
		return s.getRange(ctx, it, f, off, end, size > s.partSize)
	})
	if err != nil {
		f.Abort()
		return err
	}
	if err := f.Commit(it.Obj.LastModified); err != nil {
		return err
	}
	klog.FromContext(ctx).V(3).Info("Downloaded", "key", it.Obj.Key, "bytes", size)
	c.Done(size)
	return nil
}

// getRange copies bytes off..end of the object to the same offsets of f; the
// whole object when ranged is false. The ETag must not change meanwhile.
func (s *s3Side) getRange(ctx context.Context, it downloadItem, f *atomicFile, off, end int64, ranged bool) error {
	opts := minio.GetObjectOptions{}
	if ranged {
		if err := opts.SetRange(off, end); err != nil {
			return err
		}
		if it.Obj.ETag != "" {
			if err := opts.SetMatchETag(it.Obj.ETag); err != nil {
				return err
			}
		}
	}
	obj, err := s.client.GetObject(ctx, s.loc.Bucket, it.Obj.Key, opts)
	if err != nil {
		return fmt.Errorf("downloading s3://%s/%s: %w", s.loc.Bucket, it.Obj.Key, describeS3Error(err))
	}
	defer obj.Close()
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	n, err := io.CopyBuffer(io.NewOffsetWriter(f, off), struct{ io.Reader }{obj}, *buf)
	if err != nil {
		return fmt.Errorf("downloading s3://%s/%s: %w", s.loc.Bucket, it.Obj.Key, describeS3Error(err))
	}
	if want := end - off + 1; n != want {
		return fmt.Errorf("downloading s3://%s/%s: got %d bytes at offset %d, want %d", s.loc.Bucket, it.Obj.Key, n, off, want)
	}
	if ranged && f.durable() {
		// Start writing the part back now, while the other parts
		// download, so that the sync at the end waits for little.
		_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
	}
	return nil
}

// deleteExtra removes the regular files below dir that keep does not hold,
// including temporary files of earlier attempts.
func deleteExtra(ctx context.Context, dir string, keep map[string]bool, c *Counter) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || keep[p] {
			return nil
		}
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("sync: deleting %s: %w", p, err)
		}
		klog.FromContext(ctx).V(3).Info("Deleted", "path", p)
		if !isPartial(d.Name()) {
			c.Delete()
		}
		return nil
	})
}
