package executor

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

// hfSibling is a file of a repository revision, as listed by
// GET /api/{kind}/{repo}/revision/{rev}?blobs=true.
type hfSibling struct {
	RFilename string `json:"rfilename"`
	Size      int64  `json:"size"`
	BlobID    string `json:"blobId"`
	LFS       *struct {
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	} `json:"lfs"`
}

// hfRevision is the answer of the revision endpoint.
type hfRevision struct {
	SHA      string      `json:"sha"`
	Siblings []hfSibling `json:"siblings"`
}

// Download copies the repository's files at the revision (all, or those the
// files option names; a name may be a path.Match pattern) into dst, by
// GET {endpoint}/{repo}/resolve/{commit}/{file}. A local file whose size and
// hash (the LFS SHA-256, else the git blob id) match is skipped. With sync,
// other files below dst are deleted.
func (h *hfSide) Download(ctx context.Context, dst string, sync, fsync bool, c *Counter) error {
	var rev hfRevision
	if err := h.sendJSON(ctx, http.MethodGet, h.apiURL("revision")+"?blobs=true", nil, &rev, "application/json"); err != nil {
		return err
	}
	commit := rev.SHA
	if commit == "" {
		commit = h.revision
	}
	var want []hfSibling
	matched := map[string]bool{}
	for _, s := range rev.Siblings {
		if len(h.files) > 0 {
			ok := false
			for _, f := range h.files {
				if m, _ := path.Match(f, s.RFilename); m || f == s.RFilename {
					ok, matched[f] = true, true
				}
			}
			if !ok {
				continue
			}
		}
		want = append(want, s)
	}
	for _, f := range h.files {
		if !matched[f] {
			return fmt.Errorf("option %s: %q is not in %s at %s", OptFiles, f, h.repo, h.revision)
		}
	}
	if err := checkSyncSource(sync, h.allowEmpty, len(want), h.repoPath()); err != nil {
		return err
	}
	keep := map[string]bool{}
	seen := uniquePaths{}
	var todo []hfSibling
	for _, s := range want {
		p, err := JoinRel(dst, s.RFilename)
		if err == nil {
			err = seen.add(p, s.RFilename)
		}
		if err != nil {
			return fmt.Errorf("refusing file %q of %s: %w", s.RFilename, h.repo, err)
		}
		keep[p] = true
		if upToDate(p, s) {
			c.Skip()
			continue
		}
		todo = append(todo, s)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dst, err)
	}
	if err := removePartials(ctx, dst); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Downloading from Hugging Face", "repo", h.repoPath(), "revision", h.revision, "commit", commit, "files", len(todo), "skipped", len(want)-len(todo))
	err := forEach(ctx, h.concurrency, todo, func(ctx context.Context, s hfSibling) error {
		return h.get(ctx, dst, commit, s, fsync, c)
	})
	if err != nil {
		return err
	}
	if sync {
		return deleteExtra(ctx, dst, keep, c)
	}
	return nil
}

// get downloads one file through a temporary file.
func (h *hfSide) get(ctx context.Context, dst, commit string, s hfSibling, fsync bool, c *Counter) error {
	p, err := JoinRel(dst, s.RFilename)
	if err != nil {
		return err
	}
	if err := checkNoEscape(dst, p); err != nil {
		return err
	}
	var segs []string
	for _, seg := range strings.Split(s.RFilename, "/") {
		segs = append(segs, url.PathEscape(seg))
	}
	u := h.endpoint + "/" + h.repoPath() + "/resolve/" + url.PathEscape(commit) + "/" + strings.Join(segs, "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := h.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := createAtomic(p, fsync)
	if err != nil {
		return fmt.Errorf("writing %s: %w", s.RFilename, err)
	}
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	sum, want, size := siblingHash(s)
	var w io.Writer = f
	if sum != nil {
		w = io.MultiWriter(f, sum)
	}
	n, err := io.CopyBuffer(w, resp.Body, *buf)
	switch {
	case err != nil:
	case resp.ContentLength >= 0 && n != resp.ContentLength:
		err = fmt.Errorf("got %d bytes, want %d", n, resp.ContentLength)
	case size > 0 && n != size:
		err = fmt.Errorf("got %d bytes, the listing says %d", n, size)
	case sum != nil && hex.EncodeToString(sum.Sum(nil)) != want:
		err = fmt.Errorf("the content does not match the hash %s of the listing", want)
	}
	if err != nil {
		f.Abort()
		return fmt.Errorf("downloading %s: %w", s.RFilename, err)
	}
	if err := f.Commit(time.Time{}); err != nil {
		return err
	}
	klog.FromContext(ctx).V(3).Info("Downloaded", "file", s.RFilename, "bytes", n)
	c.Done(n)
	return nil
}

// upToDate reports whether the file at p matches the sibling's size and, when
// known, its hash.
func upToDate(p string, s hfSibling) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	h, want, size := siblingHash(s)
	if fi.Size() != size {
		return false
	}
	if h == nil {
		return true // size is all the Hub told us
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	return hex.EncodeToString(h.Sum(nil)) == want
}

// siblingHash returns the hash of a file's content as the listing gives
// it, ready to be fed the content (nil if the listing has none), the
// expected hex digest, and the expected size: the LFS SHA-256 of an LFS
// file, else the git blob id (a SHA-1 of "blob <size>\x00" and the
// content).
func siblingHash(s hfSibling) (hash.Hash, string, int64) {
	size := s.Size
	if s.LFS != nil && s.LFS.Size > 0 {
		size = s.LFS.Size
	}
	switch {
	case s.LFS != nil && s.LFS.SHA256 != "":
		return sha256.New(), strings.ToLower(s.LFS.SHA256), size
	case s.BlobID != "" && len(s.BlobID) == 2*sha1.Size:
		h := sha1.New()
		fmt.Fprintf(h, "blob %s\x00", strconv.FormatInt(size, 10))
		return h, strings.ToLower(s.BlobID), size
	}
	return nil, "", size
}
