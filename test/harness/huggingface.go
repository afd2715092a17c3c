package harness

import (
	"bufio"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
)

// FakeHF is an in-process Hugging Face Hub that speaks the endpoints the
// DataCube executor uses: the revision listing, resolve, preupload, the Git
// LFS batch API with basic transfers, and NDJSON commits. Repositories are
// keyed "models/owner/name" (or datasets/..., spaces/...).
type FakeHF struct {
	// URL is the endpoint, for HF_ENDPOINT.
	URL string
	// Token, when set, is the only bearer token accepted.
	Token string
	// LFSThreshold is the size from which preupload answers "lfs".
	LFSThreshold int64

	mu      sync.Mutex
	repos   map[string]map[string][]byte
	lfs     map[string][]byte
	commits []FakeHFCommit
	// Requests counts requests by method and path kind (e.g. "GET resolve").
	requests map[string]int
	// corrupt names the files ("repo/path") served with a flipped byte.
	corrupt map[string]bool
}

// CorruptDownloads makes resolve serve path of repo with its first byte
// flipped, while the listing keeps the size and hash of the true content.
func (f *FakeHF) CorruptDownloads(repo, path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.corrupt == nil {
		f.corrupt = map[string]bool{}
	}
	f.corrupt[repo+"/"+path] = true
}

// FakeHFCommit is a commit the fake received.
type FakeHFCommit struct {
	Repo, Summary string
	// Paths are the committed files, "lfs:" prefixed for LFS files.
	Paths []string
}

// StartFakeHF starts a FakeHF that requires token (none when empty) and
// routes files from 1 MiB through LFS.
func StartFakeHF(t testing.TB, token string) *FakeHF {
	t.Helper()
	f := &FakeHF{Token: token, LFSThreshold: 1 << 20, repos: map[string]map[string][]byte{}, lfs: map[string][]byte{}, requests: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// SetFile stores a file in a repository, creating it.
func (f *FakeHF) SetFile(repo, path string, content []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repos[repo] == nil {
		f.repos[repo] = map[string][]byte{}
	}
	f.repos[repo][path] = content
}

// File returns a file of a repository.
func (f *FakeHF) File(repo, path string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.repos[repo][path]
	return b, ok
}

// Commits returns the commits received so far.
func (f *FakeHF) Commits() []FakeHFCommit {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FakeHFCommit(nil), f.commits...)
}

// Requests returns how many requests of a kind ("GET resolve", "PUT lfs")
// were served.
func (f *FakeHF) Requests(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[kind]
}

// ServeHTTP routes a request.
func (f *FakeHF) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(r.URL.Path, "/")
	if strings.HasPrefix(p, "lfs-upload/") {
		f.count("PUT lfs")
		f.lfsUpload(w, r, strings.TrimPrefix(p, "lfs-upload/"))
		return
	}
	if f.Token != "" && r.Header.Get("Authorization") != "Bearer "+f.Token {
		http.Error(w, `{"error":"Invalid credentials in Authorization header"}`, http.StatusUnauthorized)
		return
	}
	switch {
	case strings.HasPrefix(p, "api/"):
		// api/{kind}/{owner}/{name}/{what}/{rev}
		parts := strings.SplitN(strings.TrimPrefix(p, "api/"), "/", 5)
		if len(parts) != 5 {
			http.NotFound(w, r)
			return
		}
		repo := strings.Join(parts[:3], "/")
		f.count(r.Method + " " + parts[3])
		switch parts[3] {
		case "revision":
			f.revision(w, repo)
		case "preupload":
			f.preupload(w, r)
		case "commit":
			f.commit(w, r, repo)
		default:
			http.NotFound(w, r)
		}
	case strings.Contains(p, ".git/info/lfs/objects/batch"):
		f.count("POST lfs-batch")
		f.lfsBatch(w, r)
	case strings.Contains(p, "/resolve/"):
		f.count("GET resolve")
		repoPath, rest, _ := strings.Cut(p, "/resolve/")
		_, file, _ := strings.Cut(rest, "/")
		repo := "models/" + repoPath
		if strings.Count(repoPath, "/") == 2 {
			repo = repoPath
		}
		b, ok := f.File(repo, file)
		if !ok {
			http.Error(w, `{"error":"Entry not found"}`, http.StatusNotFound)
			return
		}
		f.mu.Lock()
		if f.corrupt[repo+"/"+file] && len(b) > 0 {
			b = append([]byte{b[0] ^ 0xff}, b[1:]...)
		}
		f.mu.Unlock()
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		_, _ = w.Write(b)
	default:
		http.NotFound(w, r)
	}
}

func (f *FakeHF) count(kind string) {
	f.mu.Lock()
	f.requests[kind]++
	f.mu.Unlock()
}

func (f *FakeHF) revision(w http.ResponseWriter, repo string) {
	f.mu.Lock()
	files, ok := f.repos[repo]
	type lfs struct {
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	type sibling struct {
		RFilename string `json:"rfilename"`
		Size      int64  `json:"size"`
		BlobID    string `json:"blobId"`
		LFS       *lfs   `json:"lfs,omitempty"`
	}
	var sibs []sibling
	commit := sha1.New()
	for path, b := range files {
		s := sibling{RFilename: path, Size: int64(len(b))}
		if int64(len(b)) >= f.LFSThreshold {
			sum := sha256.Sum256(b)
			s.LFS = &lfs{SHA256: hex.EncodeToString(sum[:]), Size: int64(len(b))}
			s.BlobID = fmt.Sprintf("%x", sha1.Sum([]byte("pointer "+s.LFS.SHA256)))
		} else {
			s.BlobID = fmt.Sprintf("%x", sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(b))), b...)))
		}
		sibs = append(sibs, s)
	}
	f.mu.Unlock()
	if !ok {
		http.Error(w, `{"error":"Repository not found"}`, http.StatusNotFound)
		return
	}
	sort.Slice(sibs, func(i, j int) bool { return sibs[i].RFilename < sibs[j].RFilename })
	for _, s := range sibs {
		commit.Write([]byte(s.RFilename + s.BlobID))
	}
	writeJSON(w, map[string]any{"id": repo, "sha": hex.EncodeToString(commit.Sum(nil)), "siblings": sibs})
}

func (f *FakeHF) preupload(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Files []struct {
			Path string `json:"path"`
			Size int64  `json:"size"`
		} `json:"files"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var out []map[string]any
	for _, file := range req.Files {
		mode := "regular"
		if file.Size >= f.LFSThreshold {
			mode = "lfs"
		}
		out = append(out, map[string]any{"path": file.Path, "uploadMode": mode, "shouldIgnore": false})
	}
	writeJSON(w, map[string]any{"files": out})
}

func (f *FakeHF) lfsBatch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Objects []struct {
			OID  string `json:"oid"`
			Size int64  `json:"size"`
		} `json:"objects"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var out []map[string]any
	for _, o := range req.Objects {
		obj := map[string]any{"oid": o.OID, "size": o.Size}
		f.mu.Lock()
		_, have := f.lfs[o.OID]
		f.mu.Unlock()
		if !have {
			obj["actions"] = map[string]any{"upload": map[string]any{"href": f.URL + "/lfs-upload/" + o.OID, "header": map[string]string{"X-Fake-Upload": "1"}}}
		}
		out = append(out, obj)
	}
	w.Header().Set("Content-Type", "application/vnd.git-lfs+json")
	writeJSON(w, map[string]any{"transfer": "basic", "objects": out})
}

func (f *FakeHF) lfsUpload(w http.ResponseWriter, r *http.Request, oid string) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != oid || r.Header.Get("X-Fake-Upload") != "1" {
		http.Error(w, "bad LFS upload", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.lfs[oid] = b
	f.mu.Unlock()
}

func (f *FakeHF) commit(w http.ResponseWriter, r *http.Request, repo string) {
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	c := FakeHFCommit{Repo: repo}
	files := map[string][]byte{}
	for sc.Scan() {
		var line struct {
			Key   string `json:"key"`
			Value struct {
				Summary  string `json:"summary"`
				Path     string `json:"path"`
				Content  string `json:"content"`
				Encoding string `json:"encoding"`
				OID      string `json:"oid"`
			} `json:"value"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			http.Error(w, "bad NDJSON line: "+err.Error(), http.StatusBadRequest)
			return
		}
		switch line.Key {
		case "header":
			c.Summary = line.Value.Summary
		case "file":
			b, err := base64.StdEncoding.DecodeString(line.Value.Content)
			if err != nil || line.Value.Encoding != "base64" {
				http.Error(w, "bad file content", http.StatusBadRequest)
				return
			}
			files[line.Value.Path] = b
			c.Paths = append(c.Paths, line.Value.Path)
		case "lfsFile":
			f.mu.Lock()
			b, ok := f.lfs[line.Value.OID]
			f.mu.Unlock()
			if !ok {
				http.Error(w, "LFS object not uploaded: "+line.Value.OID, http.StatusBadRequest)
				return
			}
			files[line.Value.Path] = b
			c.Paths = append(c.Paths, "lfs:"+line.Value.Path)
		default:
			http.Error(w, "unknown key "+line.Key, http.StatusBadRequest)
			return
		}
	}
	if err := sc.Err(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for p, b := range files {
		f.SetFile(repo, p, b)
	}
	f.mu.Lock()
	f.commits = append(f.commits, c)
	f.mu.Unlock()
	writeJSON(w, map[string]string{"commitUrl": f.URL + "/" + repo + "/commit/1", "commitOid": "1"})
}

func writeJSON(w http.ResponseWriter, v any) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	_ = json.NewEncoder(w).Encode(v)
}
