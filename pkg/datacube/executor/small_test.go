package executor

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSize(t *testing.T) {
	testCases := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "67108864", want: 64 << 20},
		{in: "64Mi", want: 64 << 20},
		{in: "64MiB", want: 64 << 20},
		{in: "64M", want: 64 << 20},
		{in: "1Gi", want: 1 << 30},
		{in: "16KiB", want: 16 << 10},
		{in: "-1", wantErr: true},
		{in: "1.5Mi", wantErr: true},
		{in: "lots", wantErr: true},
	}
	for _, tc := range testCases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("ParseSize(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParseGitRemote(t *testing.T) {
	basic := func(s string) string { return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	testCases := []struct {
		name, url, token string
		want             gitRemote
		wantErr          bool
	}{
		{name: "token as user", url: "https://$(TOKEN)@github.com/u/r.git", token: "tok", want: gitRemote{URL: "https://github.com/u/r.git", AuthHeader: basic("tok:"), Name: "r"}},
		{name: "token as password", url: "https://me:$(TOKEN)@git.example.com/g/repo", token: "tok", want: gitRemote{URL: "https://git.example.com/g/repo", AuthHeader: basic("me:tok"), Name: "repo"}},
		{name: "token without placeholder", url: "http://h/x/y.git/", token: "tok", want: gitRemote{URL: "http://h/x/y.git/", AuthHeader: basic("oauth2:tok"), Name: "y"}},
		{name: "public", url: "https://github.com/u/r.git", want: gitRemote{URL: "https://github.com/u/r.git", Name: "r"}},
		{name: "file", url: "file:///srv/git/repo.git", want: gitRemote{URL: "file:///srv/git/repo.git", Name: "repo"}},
		{name: "scp-like", url: "git@github.com:u/r.git", want: gitRemote{URL: "git@github.com:u/r.git", Name: "r"}},
		{name: "placeholder without token", url: "https://$(TOKEN)@github.com/u/r.git", wantErr: true},
		{name: "placeholder on ssh", url: "ssh://$(TOKEN)@h/r.git", token: "tok", wantErr: true},
		{name: "no name", url: "https://github.com/", wantErr: true},
		{name: "dot dot name", url: "https://h/..", wantErr: true},
		{name: "empty", url: "", wantErr: true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseGitRemote(tc.url, tc.token)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseGitRemote(%q) error %v, want error %v", tc.url, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseGitRemote(%q) mismatch (-want +got):\n%s", tc.url, diff)
			}
			if tc.token != "" && (strings.Contains(got.URL, tc.token) || strings.Contains(got.URL, "TOKEN")) {
				t.Errorf("url %q still holds the token", got.URL)
			}
		})
	}
}

func TestRedactor(t *testing.T) {
	r := NewRedactor("s3cr3t/key+x", "tok-123", "")
	testCases := []struct{ in, want string }{
		{in: "key s3cr3t/key+x failed", want: "key <redacted> failed"},
		{in: "https://u:s3cr3t%2Fkey%2Bx@h", want: "https://u:<redacted>@h"},
		{in: "Basic " + base64.StdEncoding.EncodeToString([]byte("tok-123")), want: "Basic <redacted>"},
		{in: "nothing here", want: "nothing here"},
	}
	for _, tc := range testCases {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseS3URI(t *testing.T) {
	testCases := []struct {
		uri        string
		want       s3Location
		wantPrefix bool
		wantErr    bool
	}{
		{uri: "s3://b", want: s3Location{Bucket: "b"}, wantPrefix: true},
		{uri: "s3://b/dir/", want: s3Location{Bucket: "b", Key: "dir/"}, wantPrefix: true},
		{uri: "s3://b/dir/file.bin", want: s3Location{Bucket: "b", Key: "dir/file.bin"}},
		{uri: "s3://b/../x", wantErr: true},
		{uri: "s3:///x", wantErr: true},
		{uri: "http://b/x", wantErr: true},
	}
	for _, tc := range testCases {
		got, err := parseS3URI(tc.uri)
		if (err != nil) != tc.wantErr || got != tc.want || (err == nil && got.IsPrefix() != tc.wantPrefix) {
			t.Errorf("parseS3URI(%q) = %+v, %v; want %+v, error %v", tc.uri, got, err, tc.want, tc.wantErr)
		}
	}
}
