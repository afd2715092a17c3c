package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"k8s.io/klog/v2"
)

// uploadItem is a local file and the key it is uploaded to.
type uploadItem struct {
	localFile
	Key string
}

// Upload copies src (a PVC directory or file) to the S3 location: a file to
// the key (or below the prefix), a directory's files below the prefix. A
// file whose object has the same size and was written after the file's
// modification time is skipped. With sync, objects below the prefix that
// have no local file are deleted.
func (s *s3Side) Upload(ctx context.Context, src string, sync bool, fsync bool, c *Counter) error {
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("reading source: %w", err)
	}
	if !s.noCheck {
		if err := s.ensureBucket(ctx); err != nil {
			return err
		}
	}
	var items []uploadItem
	prefix := s.loc.Key
	if fi.Mode().IsRegular() {
		key := s.loc.Key
		if s.loc.IsPrefix() {
			key += filepath.Base(src)
		}
		items = []uploadItem{{localFile{Rel: filepath.Base(src), Path: src, Size: fi.Size(), ModTime: fi.ModTime()}, key}}
		prefix = key
	} else {
		if prefix != "" && !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		files, err := listLocal(ctx, src)
		if err != nil {
			return err
		}
		for _, f := range files {
			items = append(items, uploadItem{f, prefix + f.Rel})
		}
	}
	if err := checkSyncSource(sync && !fi.Mode().IsRegular(), s.allowEmpty, len(items), "the PVC directory"); err != nil {
		return err
	}
	remote, err := s.list(ctx, prefix, fi.Mode().IsRegular())
	if err != nil {
		return err
	}
	var small, large []uploadItem
	for _, it := range items {
		if o, ok := remote[it.Key]; ok && o.Size == it.Size && !o.LastModified.Before(it.ModTime.Truncate(time.Second)) {
			c.Skip()
			continue
		}
		if it.Size > s.partSize {
			large = append(large, it)
		} else {
			small = append(small, it)
		}
	}
	klog.FromContext(ctx).Info("Uploading", "bucket", s.loc.Bucket, "prefix", prefix, "files", len(small)+len(large), "skipped", len(items)-len(small)-len(large))
	if err := forEach(ctx, s.numThreads, small, func(ctx context.Context, it uploadItem) error {
		return s.put(ctx, it, 1, c)
	}); err != nil {
		return err
	}
	for _, it := range large {
		if err := s.put(ctx, it, s.numThreads, c); err != nil {
			return err
		}
	}
	if sync && !fi.Mode().IsRegular() {
		local := make(map[string]bool, len(items))
		for _, it := range items {
			local[it.Key] = true
		}
		var extra []string
		for key := range remote {
			if !local[key] {
				extra = append(extra, key)
			}
		}
		return s.remove(ctx, extra, c)
	}
	return nil
}

// ensureBucket creates the bucket if it does not exist.
func (s *s3Side) ensureBucket(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.loc.Bucket)
	if err != nil {
		return fmt.Errorf("checking bucket %s: %w", s.loc.Bucket, describeS3Error(err))
	}
	if ok {
		return nil
	}
	if err := s.client.MakeBucket(ctx, s.loc.Bucket, minio.MakeBucketOptions{Region: os.Getenv("AWS_REGION")}); err != nil {
		return fmt.Errorf("creating bucket %s: %w", s.loc.Bucket, describeS3Error(err))
	}
	klog.FromContext(ctx).Info("Created bucket", "bucket", s.loc.Bucket)
	return nil
}

// list returns the objects below prefix by key, or the single object key
// when single is set (an empty map if it does not exist).
func (s *s3Side) list(ctx context.Context, prefix string, single bool) (map[string]minio.ObjectInfo, error) {
	out := map[string]minio.ObjectInfo{}
	if single {
		o, err := s.client.StatObject(ctx, s.loc.Bucket, prefix, minio.StatObjectOptions{})
		if err == nil {
			out[prefix] = o
			return out, nil
		}
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return out, nil
		}
		return nil, fmt.Errorf("reading s3://%s/%s: %w", s.loc.Bucket, prefix, describeS3Error(err))
	}
	for o := range s.client.ListObjects(ctx, s.loc.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("listing s3://%s/%s: %w", s.loc.Bucket, prefix, describeS3Error(o.Err))
		}
		if strings.HasSuffix(o.Key, "/") {
			continue // a directory marker
		}
		out[o.Key] = o
	}
	return out, nil
}

// put uploads one file; files larger than the part size go as a multipart
// upload of threads parallel parts read straight from the file.
func (s *s3Side) put(ctx context.Context, it uploadItem, threads int, c *Counter) error {
	f, err := os.Open(it.Path)
	if err != nil {
		return fmt.Errorf("opening %s: %w", it.Rel, err)
	}
	defer f.Close()
	_, err = s.client.PutObject(ctx, s.loc.Bucket, it.Key, f, it.Size, minio.PutObjectOptions{
		PartSize:    uint64(s.partSize),
		NumThreads:  uint(threads),
		ContentType: "application/octet-stream",
	})
	if err != nil {
		return fmt.Errorf("uploading %s to s3://%s/%s: %w", it.Rel, s.loc.Bucket, it.Key, describeS3Error(err))
	}
	klog.FromContext(ctx).V(3).Info("Uploaded", "key", it.Key, "bytes", it.Size)
	c.Done(it.Size)
	return nil
}

// remove deletes keys, counting each deletion.
func (s *s3Side) remove(ctx context.Context, keys []string, c *Counter) error {
	if len(keys) == 0 {
		return nil
	}
	ch := make(chan minio.ObjectInfo)
	go func() {
		defer close(ch)
		for _, k := range keys {
			select {
			case ch <- minio.ObjectInfo{Key: k}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var errs []error
	failed := 0
	for res := range s.client.RemoveObjectsWithResult(ctx, s.loc.Bucket, ch, minio.RemoveObjectsOptions{}) {
		if res.Err != nil {
			failed++
			errs = append(errs, fmt.Errorf("deleting s3://%s/%s: %w", s.loc.Bucket, res.ObjectName, describeS3Error(res.Err)))
			continue
		}
		klog.FromContext(ctx).V(3).Info("Deleted", "key", res.ObjectName)
		c.Delete()
	}
	return errors.Join(errs...)
}
