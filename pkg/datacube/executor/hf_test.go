package executor

import (
	"encoding/hex"
	"hash"
	"io"
	"net/http"
	"strings"
	"testing"
)

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestHFTokenOnlyToEndpoint sends requests to URLs that start like the
// endpoint but lie elsewhere and checks only the endpoint gets the token.
func TestHFTokenOnlyToEndpoint(t *testing.T) {
	testCases := []struct {
		endpoint, url string
		want          bool
	}{
		{endpoint: "https://huggingface.co", url: "https://huggingface.co/api/models/o/r", want: true},
		{endpoint: "https://huggingface.co", url: "https://HuggingFace.co/o/r.git/info/lfs/objects/batch", want: true},
		{endpoint: "https://huggingface.co", url: "https://huggingface.co@evil.example/lfs/x"},
		{endpoint: "https://huggingface.co", url: "https://huggingface.co.evil.example/lfs/x"},
		{endpoint: "https://huggingface.co", url: "https://huggingface.co:8443/lfs/x"},
		{endpoint: "https://huggingface.co", url: "http://huggingface.co/lfs/x"},
		{endpoint: "https://hub.example/hf", url: "https://hub.example/hf/api/x", want: true},
		{endpoint: "https://hub.example/hf", url: "https://hub.example/hfevil/x"},
		{endpoint: "http://127.0.0.1:8080", url: "http://127.0.0.1:8080/api/x", want: true},
		{endpoint: "http://127.0.0.1:8080", url: "http://127.0.0.1:8081/api/x"},
	}
	for _, tc := range testCases {
		t.Run(tc.url, func(t *testing.T) {
			var got string
			h := &hfSide{endpoint: tc.endpoint, token: "hf_secret", client: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				got = r.Header.Get("Authorization")
				return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
			})}}
			req, err := http.NewRequest(http.MethodGet, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := h.do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if sent := strings.Contains(got, "hf_secret"); sent != tc.want {
				t.Errorf("Authorization %q sent to %s (endpoint %s), want the token sent: %v", got, tc.url, tc.endpoint, tc.want)
			}
		})
	}
}

// TestSiblingHash checks the expected hash of a listed file: the LFS
// SHA-256, else the git blob id.
func TestSiblingHash(t *testing.T) {
	content := "hello\n"
	blob := hfSibling{RFilename: "a", Size: int64(len(content)), BlobID: "ce013625030ba8dba906f756967f9e9ca394464a"}
	h, want, size := siblingHash(blob)
	if h == nil || size != int64(len(content)) {
		t.Fatalf("siblingHash(blob) = %v, %d", h, size)
	}
	_, _ = io.WriteString(h, content)
	if got := hexSum(h); got != want {
		t.Errorf("blob hash %s, want %s", got, want)
	}
	if h, _, _ := siblingHash(hfSibling{RFilename: "b", Size: 3}); h != nil {
		t.Error("a file listed without a hash has one")
	}
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }
