package executor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"

	"k8s.io/klog/v2"
)

// hfUpload is a local file and its path in the repository.
type hfUpload struct {
	localFile
	RepoPath string
	LFS      bool
	SHA256   string
}

// preuploadBatch is how many files one preupload call asks about.
const preuploadBatch = 100

// Upload commits src (a directory's files, or one file) to the repository at
// path-in-repo on the revision, in one commit with the commit-message:
//
//   - POST /api/{kind}/{repo}/preupload/{rev} asks which files go through
//     LFS (the Hub decides from size and a 512-byte sample);
//   - LFS files are hashed and sent with the Git LFS batch API
//     (POST /{repo}.git/info/lfs/objects/batch, "basic" transfer: one PUT
//     per object to the URL it returns, then its verify call);
//   - POST /api/{kind}/{repo}/commit/{rev} with NDJSON: the header line,
//     a "file" line with base64 content per regular file and an "lfsFile"
//     line per LFS file. The body is streamed, so memory stays small.
func (h *hfSide) Upload(ctx context.Context, src string, c *Counter) error {
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("reading source: %w", err)
	}
	var items []hfUpload
	if fi.Mode().IsRegular() {
		p := h.pathInRepo
		if p == "" {
			p = filepath.Base(src)
		}
		items = append(items, hfUpload{localFile: localFile{Rel: filepath.Base(src), Path: src, Size: fi.Size()}, RepoPath: p})
	} else {
		files, err := listLocal(ctx, src, ".git")
		if err != nil {
			return err
		}
		for _, f := range files {
			items = append(items, hfUpload{localFile: f, RepoPath: path.Join(h.pathInRepo, f.Rel)})
		}
	}
	if len(items) == 0 {
		return fmt.Errorf("nothing to upload: %s holds no files", src)
	}
	for _, it := range items {
		if err := CheckRelPath(it.RepoPath); err != nil {
			return err
		}
	}
	if err := h.preupload(ctx, items); err != nil {
		return err
	}
	var lfs []*hfUpload
	for i := range items {
		if items[i].LFS {
			lfs = append(lfs, &items[i])
		}
	}
	if err := forEach(ctx, h.concurrency, lfs, func(_ context.Context, it *hfUpload) error {
		sum, err := fileSHA256(it.Path)
		it.SHA256 = sum
		return err
	}); err != nil {
		return err
	}
	if err := h.uploadLFS(ctx, lfs); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Committing to Hugging Face", "repo", h.repoPath(), "revision", h.revision, "files", len(items), "lfs", len(lfs))
	if err := h.commit(ctx, items); err != nil {
		return err
	}
	for _, it := range items {
		c.Done(it.Size)
	}
	return nil
}

// preupload marks the items the Hub wants through LFS.
func (h *hfSide) preupload(ctx context.Context, items []hfUpload) error {
	type file struct {
		Path   string `json:"path"`
		Sample string `json:"sample"`
		Size   int64  `json:"size"`
	}
	for start := 0; start < len(items); start += preuploadBatch {
		batch := items[start:min(start+preuploadBatch, len(items))]
		var req struct {
			Files []file `json:"files"`
		}
		for _, it := range batch {
			sample := make([]byte, 512)
			f, err := os.Open(it.Path)
			if err != nil {
				return fmt.Errorf("reading %s: %w", it.Rel, err)
			}
			n, _ := io.ReadFull(f, sample)
			f.Close()
			req.Files = append(req.Files, file{Path: it.RepoPath, Sample: base64.StdEncoding.EncodeToString(sample[:n]), Size: it.Size})
		}
		var resp struct {
			Files []struct {
				Path       string `json:"path"`
				UploadMode string `json:"uploadMode"`
			} `json:"files"`
		}
		if err := h.sendJSON(ctx, http.MethodPost, h.apiURL("preupload"), req, &resp, "application/json"); err != nil {
			return err
		}
		mode := map[string]string{}
		for _, f := range resp.Files {
			mode[f.Path] = f.UploadMode
		}
		for i := range batch {
			batch[i].LFS = mode[batch[i].RepoPath] == "lfs"
		}
	}
	return nil
}

// lfsAction is an action of the LFS batch answer.
type lfsAction struct {
	Href   string            `json:"href"`
	Header map[string]string `json:"header"`
}

// lfsObject is an object of the LFS batch answer.
type lfsObject struct {
	OID     string `json:"oid"`
	Actions struct {
		Upload *lfsAction `json:"upload"`
		Verify *lfsAction `json:"verify"`
	} `json:"actions"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// uploadLFS sends the LFS objects the Hub does not have yet.
func (h *hfSide) uploadLFS(ctx context.Context, items []*hfUpload) error {
	if len(items) == 0 {
		return nil
	}
	type object struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	}
	req := struct {
		Operation string   `json:"operation"`
		Transfers []string `json:"transfers"`
		Objects   []object `json:"objects"`
		HashAlgo  string   `json:"hash_algo"`
		Ref       struct {
			Name string `json:"name"`
		} `json:"ref"`
	}{Operation: "upload", Transfers: []string{"basic"}, HashAlgo: "sha256"}
	req.Ref.Name = "refs/heads/" + h.revision
	byOID := map[string]*hfUpload{}
	for _, it := range items {
		if _, dup := byOID[it.SHA256]; !dup {
			req.Objects = append(req.Objects, object{OID: it.SHA256, Size: it.Size})
		}
		byOID[it.SHA256] = it
	}
	var resp struct {
		Objects []lfsObject `json:"objects"`
	}
	u := h.endpoint + "/" + h.repoPath() + ".git/info/lfs/objects/batch"
	if err := h.sendJSON(ctx, http.MethodPost, u, req, &resp, "application/vnd.git-lfs+json"); err != nil {
		return err
	}
	return forEach(ctx, h.concurrency, resp.Objects, func(ctx context.Context, o lfsObject) error {
		it := byOID[o.OID]
		switch {
		case o.Error != nil:
			return fmt.Errorf("LFS upload of %s refused: %d %s", it.RepoPath, o.Error.Code, o.Error.Message)
		case it == nil:
			return fmt.Errorf("LFS batch answered an unknown object %s", o.OID)
		case o.Actions.Upload == nil:
			return nil // the Hub has it already
		}
		if _, chunked := o.Actions.Upload.Header["chunk_size"]; chunked {
			return fmt.Errorf("LFS upload of %s: multipart LFS uploads are not supported", it.RepoPath)
		}
		if err := h.putLFS(ctx, it, o.Actions.Upload); err != nil {
			return err
		}
		if v := o.Actions.Verify; v != nil {
			vreq, err := http.NewRequestWithContext(ctx, http.MethodPost, v.Href, jsonBody(object{OID: it.SHA256, Size: it.Size}))
			if err != nil {
				return err
			}
			vreq.Header.Set("Content-Type", "application/vnd.git-lfs+json")
			for k, val := range v.Header {
				vreq.Header.Set(k, val)
			}
			resp, err := h.do(vreq)
			if err != nil {
				return fmt.Errorf("verifying LFS object of %s: %w", it.RepoPath, err)
			}
			resp.Body.Close()
		}
		return nil
	})
}

// putLFS sends one file to an LFS upload URL.
func (h *hfSide) putLFS(ctx context.Context, it *hfUpload, a *lfsAction) error {
	f, err := os.Open(it.Path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", it.Rel, err)
	}
	defer f.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, a.Href, f)
	if err != nil {
		return err
	}
	req.ContentLength = it.Size
	for k, v := range a.Header {
		req.Header.Set(k, v)
	}
	resp, err := h.do(req)
	if err != nil {
		return fmt.Errorf("uploading LFS object of %s: %w", it.RepoPath, err)
	}
	resp.Body.Close()
	klog.FromContext(ctx).V(3).Info("Uploaded LFS object", "file", it.RepoPath, "bytes", it.Size)
	return nil
}

// commit posts the NDJSON commit, streaming file contents as base64.
func (h *hfSide) commit(ctx context.Context, items []hfUpload) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeCommit(pw, h.message, items)) }()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.apiURL("commit"), pr)
	if err != nil {
		pr.Close()
		return err
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := h.do(req)
	pr.Close()
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out struct {
		CommitURL string `json:"commitUrl"`
		CommitOID string `json:"commitOid"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	klog.FromContext(ctx).Info("Committed to Hugging Face", "repo", h.repoPath(), "commit", out.CommitOID, "url", out.CommitURL)
	return nil
}

// writeCommit writes the NDJSON lines of a commit.
func writeCommit(w io.Writer, message string, items []hfUpload) error {
	enc := json.NewEncoder(w)
	header := map[string]any{"key": "header", "value": map[string]string{"summary": message, "description": ""}}
	if err := enc.Encode(header); err != nil {
		return err
	}
	for _, it := range items {
		if it.LFS {
			line := map[string]any{"key": "lfsFile", "value": map[string]string{"path": it.RepoPath, "algo": "sha256", "oid": it.SHA256}}
			if err := enc.Encode(line); err != nil {
				return err
			}
			continue
		}
		// {"key":"file","value":{"content":"<base64>","path":...,"encoding":"base64"}}
		pathJSON, _ := json.Marshal(it.RepoPath)
		if _, err := io.WriteString(w, `{"key":"file","value":{"path":`+string(pathJSON)+`,"encoding":"base64","content":"`); err != nil {
			return err
		}
		f, err := os.Open(it.Path)
		if err != nil {
			return fmt.Errorf("reading %s: %w", it.Rel, err)
		}
		b64 := base64.NewEncoder(base64.StdEncoding, w)
		_, err = io.Copy(b64, f)
		f.Close()
		if err == nil {
			err = b64.Close()
		}
		if err != nil {
			return err
		}
		if _, err := io.WriteString(w, "\"}}\n"); err != nil {
			return err
		}
	}
	return nil
}

// fileSHA256 returns the hex SHA-256 of a file.
func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// jsonBody returns v as a JSON request body.
func jsonBody(v any) io.Reader {
	b, _ := json.Marshal(v)
	return bytes.NewReader(b)
}
