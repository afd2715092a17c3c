package sequencer

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestScriptFile(t *testing.T) {
	testCases := []struct {
		script, want string
	}{
		{"#!/usr/bin/env python3\nprint('hi')\n", "#!/usr/bin/env python3\nprint('hi')\n"},
		{"#!/bin/sh\n", "#!/bin/sh\n"},
		{"echo hi\n", "#!/bin/bash\nset -e\necho hi\n"},
		{" #!/bin/sh\n", "#!/bin/bash\nset -e\n #!/bin/sh\n"},
		{"", "#!/bin/bash\nset -e\n"},
	}
	for _, tc := range testCases {
		if got := string(ScriptFile(tc.script)); got != tc.want {
			t.Errorf("ScriptFile(%q) = %q, want %q", tc.script, got, tc.want)
		}
	}
}

func TestEncodeDecode(t *testing.T) {
	testCases := []struct {
		name    string
		results []Result
		want    string
	}{
		{name: "none", results: nil, want: "[]"},
		{name: "empty value", results: []Result{{Name: "a"}}, want: `[{"name":"a","value":""}]`},
		{
			name:    "no HTML escaping",
			results: []Result{{Name: "sum", Value: "6"}, {Name: "html", Value: "<a & b>\n\"q\""}},
			want:    `[{"name":"sum","value":"6"},{"name":"html","value":"<a & b>\n\"q\""}]`,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			msg, err := EncodeResults(tc.results)
			if err != nil {
				t.Fatal(err)
			}
			if msg != tc.want {
				t.Errorf("EncodeResults = %s, want %s", msg, tc.want)
			}
			got, err := DecodeMessage(msg)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.results
			if want == nil {
				want = []Result{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("DecodeMessage(EncodeResults) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEncodeTooLarge(t *testing.T) {
	at := 4096 - len(`[{"name":"r","value":""}]`)
	if msg, err := EncodeResults([]Result{{Name: "r", Value: strings.Repeat("x", at)}}); err != nil || len(msg) != 4096 {
		t.Errorf("EncodeResults of 4096 bytes: %d bytes, %v", len(msg), err)
	}
	_, err := EncodeResults([]Result{{Name: "r", Value: strings.Repeat("x", at+1)}})
	if err == nil || !strings.Contains(err.Error(), "the results take 4097 bytes as JSON, over the 4096 bytes") || !strings.Contains(err.Error(), "r 4072") {
		t.Fatalf("EncodeResults of 4097 bytes: %v", err)
	}
	// Many results: the error still fits a termination message.
	var many []Result
	for i := range 200 {
		many = append(many, Result{Name: strings.Repeat("n", 60) + string(rune('a'+i%26)), Value: "0123456789"})
	}
	_, err = EncodeResults(many)
	if err == nil {
		t.Fatal("EncodeResults of 200 results succeeded")
	}
	msg := ErrorMessage(err)
	if len(msg) > MaxMessageBytes || !strings.HasSuffix(msg, "...") || !utf8.ValidString(msg) {
		t.Errorf("ErrorMessage is %d bytes, %q...", len(msg), msg[:80])
	}
	if _, derr := DecodeMessage(msg); derr == nil || !strings.HasPrefix(derr.Error(), "the results take") {
		t.Errorf("DecodeMessage(ErrorMessage) = %v", derr)
	}
}

func TestTruncate(t *testing.T) {
	s := strings.Repeat("ü", 10) // 2 bytes each
	for n := 4; n <= 20; n++ {
		got := truncate(s, n)
		if len(got) > n || !utf8.ValidString(got) {
			t.Errorf("truncate(%d) = %q (%d bytes)", n, got, len(got))
		}
	}
	if got := truncate("short", 10); got != "short" {
		t.Errorf("truncate(short) = %q", got)
	}
}

func TestDecodeMessage(t *testing.T) {
	testCases := []struct {
		msg     string
		want    []Result
		wantErr string
	}{
		{msg: "", want: nil},
		{msg: `[{"name":"a","value":"1"}]`, want: []Result{{Name: "a", Value: "1"}}},
		{msg: ErrorPrefix + "result big: too large", wantErr: "result big: too large"},
		{msg: `[{"name":`, wantErr: "decoding the results"},
		{msg: "panic: runtime error", wantErr: `the termination message "panic: runtime error" holds no results`},
	}
	for _, tc := range testCases {
		got, err := DecodeMessage(tc.msg)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("DecodeMessage(%q) = %v, %v; want error %q", tc.msg, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("DecodeMessage(%q): %v", tc.msg, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("DecodeMessage(%q) (-want +got):\n%s", tc.msg, diff)
		}
	}
}

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(t.TempDir(), "exe")
	if err := os.WriteFile(exe, []byte("binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=/bin",
		ScriptEnvPrefix + "0=" + base64.StdEncoding.EncodeToString([]byte("echo $$ $(date)\n")),
		ScriptEnvPrefix + "3=" + base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\necho three\n")),
		"NOT_" + ScriptEnvPrefix + "1=x",
	}
	if err := Install(dir, exe, env); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read(filepath.Join(dir, Binary)); got != "binary" {
		t.Errorf("installed binary %q", got)
	}
	if got := read(ScriptPath(dir, 0)); got != "#!/bin/bash\nset -e\necho $$ $(date)\n" {
		t.Errorf("script 0 = %q", got)
	}
	if got := read(ScriptPath(dir, 3)); got != "#!/bin/sh\necho three\n" {
		t.Errorf("script 3 = %q", got)
	}
	if _, err := os.Stat(ScriptPath(dir, 1)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("script 1: %v, want none", err)
	}
	// Installing again (an init container run twice) is fine.
	if err := Install(dir, exe, env); err != nil {
		t.Errorf("installing again: %v", err)
	}

	for _, bad := range []string{ScriptEnvPrefix + "-1=ZQ==", ScriptEnvPrefix + "=ZQ==", ScriptEnvPrefix + "2=%%%"} {
		if err := Install(t.TempDir(), exe, []string{bad}); err == nil {
			t.Errorf("Install with %s succeeded", bad)
		}
	}
	if err := Install(t.TempDir(), filepath.Join(dir, "missing"), nil); err == nil {
		t.Error("Install of a missing executable succeeded")
	}
}
