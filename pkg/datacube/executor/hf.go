package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
)

// The Hugging Face Hub endpoint used without $HF_ENDPOINT.
const (
	EnvHFEndpoint     = "HF_ENDPOINT"
	DefaultHFEndpoint = "https://huggingface.co"
	hfDefaultRevision = "main"
)

// hfRepoPattern matches owner/name (and a bare name).
var hfRepoPattern = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*$`)

// hfSide is a Hugging Face end of a transfer.
type hfSide struct {
	endpoint    string
	kind        string // models, datasets or spaces
	repo        string
	revision    string
	token       string
	files       []string
	pathInRepo  string
	message     string
	client      *http.Client
	concurrency int
	allowEmpty  bool
}

// newHFSide reads the repo, token, files, path-in-repo and commit-message
// options. The repo is owner/name for a model, or datasets/owner/name or
// spaces/owner/name. The revision is the ref option, else main.
func newHFSide(side Side, cfg *Config) (*hfSide, error) {
	h := &hfSide{
		endpoint:    strings.TrimSuffix(DefaultHFEndpoint, "/"),
		kind:        "models",
		revision:    side.Option(OptRef, hfDefaultRevision),
		token:       side.Options[OptToken],
		pathInRepo:  strings.Trim(side.Options[OptPathInRepo], "/"),
		message:     side.Option(OptCommitMessage, "Upload from DataCube"),
		concurrency: cfg.Concurrency,
		allowEmpty:  cfg.SyncAllowEmpty,
	}
	if ep := os.Getenv(EnvHFEndpoint); ep != "" {
		u, err := url.Parse(ep)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("invalid $%s %q: want http[s]://host", EnvHFEndpoint, ep)
		}
		h.endpoint = strings.TrimSuffix(ep, "/")
	}
	repo := side.Options[OptRepo]
	for _, kind := range []string{"datasets", "spaces", "models"} {
		if rest, ok := strings.CutPrefix(repo, kind+"/"); ok && strings.Contains(rest, "/") {
			h.kind, repo = kind, rest
		}
	}
	if !hfRepoPattern.MatchString(repo) || strings.Contains(repo, "..") {
		return nil, fmt.Errorf("invalid %s %q: want owner/name", OptRepo, side.Options[OptRepo])
	}
	h.repo = repo
	if strings.ContainsAny(h.revision, " \t\n?#") || strings.Contains(h.revision, "..") {
		return nil, fmt.Errorf("invalid %s %q", OptRef, h.revision)
	}
	if h.pathInRepo != "" {
		if err := CheckRelPath(h.pathInRepo); err != nil {
			return nil, fmt.Errorf("option %s: %w", OptPathInRepo, err)
		}
	}
	for _, f := range strings.Split(side.Options[OptFiles], ",") {
		if f = strings.TrimSpace(f); f != "" {
			if err := CheckRelPath(f); err != nil {
				return nil, fmt.Errorf("option %s: %w", OptFiles, err)
			}
			h.files = append(h.files, f)
		}
	}
	h.client = &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   cfg.ConnectTimeout,
		ResponseHeaderTimeout: 5 * time.Minute,
		ForceAttemptHTTP2:     true,
	}}
	return h, nil
}

// repoPath is the repository's path in web URLs: owner/name for a model,
// datasets/owner/name otherwise.
func (h *hfSide) repoPath() string {
	if h.kind == "models" {
		return h.repo
	}
	return h.kind + "/" + h.repo
}

// apiURL returns {endpoint}/api/{kind}/{repo}/{what}/{revision}.
func (h *hfSide) apiURL(what string) string {
	return h.endpoint + "/api/" + h.kind + "/" + h.repo + "/" + what + "/" + url.PathEscape(h.revision)
}

// isEndpoint reports whether u lies on the Hub endpoint: same scheme and
// host (port included), no user info, and below the endpoint's path. Only
// such requests get the token; an LFS href elsewhere does not.
func (h *hfSide) isEndpoint(u *url.URL) bool {
	ep, err := url.Parse(h.endpoint)
	if err != nil || u.User != nil || u.Opaque != "" {
		return false
	}
	if !strings.EqualFold(u.Scheme, ep.Scheme) || !strings.EqualFold(u.Host, ep.Host) {
		return false
	}
	base := strings.TrimSuffix(ep.Path, "/")
	return base == "" || u.Path == base || strings.HasPrefix(u.Path, base+"/")
}

// do sends req with the token and fails on a status other than 2xx, with
// a message that names the usual causes.
func (h *hfSide) do(req *http.Request) (*http.Response, error) {
	if h.token != "" && h.isEndpoint(req.URL) {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("hub request %s %s: %w", req.Method, req.URL.Redacted(), err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	msg := strings.TrimSpace(string(body))
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	what := ""
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		what = " (the token is missing or invalid)"
	case http.StatusForbidden:
		what = " (the token lacks permission)"
	case http.StatusNotFound:
		what = " (no such repository, revision or file, or a private one without a valid token)"
	}
	return nil, fmt.Errorf("hub request %s %s: %s%s: %s", req.Method, req.URL.Redacted(), resp.Status, what, msg)
}

// sendJSON sends in (if not nil) as JSON with method to u and decodes the
// JSON answer into out (if not nil).
func (h *hfSide) sendJSON(ctx context.Context, method, u string, in, out any, contentType string) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", contentType)
	resp, err := h.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decoding the answer of %s %s: %w", method, u, err)
	}
	return nil
}
