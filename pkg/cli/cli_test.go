package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	testCases := []struct {
		name       string
		args       []string
		env        map[string]string
		bodyErr    error
		wantCode   int
		wantMode   string
		wantRan    bool
		wantStdout string
		wantStderr string
	}{
		{name: "defaults", wantCode: ExitOK, wantMode: "a", wantRan: true},
		{name: "flag", args: []string{"--mode=b"}, wantCode: ExitOK, wantMode: "b", wantRan: true},
		{name: "env fallback", env: map[string]string{"TEST_MODE": "b"}, wantCode: ExitOK, wantMode: "b", wantRan: true},
		{name: "flag beats env", args: []string{"--mode=a"}, env: map[string]string{"TEST_MODE": "b"}, wantCode: ExitOK, wantMode: "a", wantRan: true},
		{name: "help", args: []string{"--help"}, wantCode: ExitOK, wantStdout: "--mode"},
		{name: "help names env", args: []string{"-h"}, wantCode: ExitOK, wantStdout: "$TEST_MODE"},
		{name: "version", args: []string{"--version"}, wantCode: ExitOK, wantStdout: "prog v"},
		{name: "unknown flag", args: []string{"--nope"}, wantCode: ExitBadUsage, wantStderr: "flag provided but not defined: -nope"},
		{name: "bad value", args: []string{"--mode=c"}, wantCode: ExitBadUsage, wantStderr: `invalid value "c" for flag --mode`},
		{name: "bad env value", env: map[string]string{"TEST_COUNT": "x"}, wantCode: ExitBadUsage, wantStderr: "$TEST_COUNT"},
		{name: "stray argument", args: []string{"extra"}, wantCode: ExitBadUsage, wantStderr: `unexpected argument "extra"`},
		{name: "body fails", bodyErr: errors.New("boom"), wantCode: ExitFailure, wantMode: "a", wantRan: true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			fs := NewFlagSet("prog", "a test program")
			mode := fs.String("mode", "a", "The mode.")
			fs.Int("count", 1, "A count.")
			fs.Env("mode", "TEST_MODE")
			fs.Env("count", "TEST_COUNT")
			fs.Check(func() error { return OneOf("mode", *mode, "a", "b") })

			var stdout, stderr bytes.Buffer
			ran := false
			code := run(fs, tc.args, &stdout, &stderr, func(context.Context) error {
				ran = true
				return tc.bodyErr
			})
			if code != tc.wantCode {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tc.wantCode, stderr.String())
			}
			if ran != tc.wantRan {
				t.Errorf("body ran = %v, want %v", ran, tc.wantRan)
			}
			if tc.wantRan && *mode != tc.wantMode {
				t.Errorf("mode = %q, want %q", *mode, tc.wantMode)
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) {
				t.Errorf("stdout = %q, want it to contain %q", stdout.String(), tc.wantStdout)
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}

func TestAlternatives(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a or b"}, {[]string{"a", "b", "c"}, "a, b or c"}} {
		if got := Alternatives(tc.in...); got != tc.want {
			t.Errorf("Alternatives(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestHosts(t *testing.T) {
	for v, ok := range map[string]bool{
		"":                      true,
		"ai.example.com":        true,
		"ai.example.com:8443":   true,
		"10.0.0.1":              true,
		"AI.example.com":        false,
		"ai.example.com/path":   false,
		"ai.example.com:0":      false,
		"ai.example.com:08443":  false,
		"-ai.example.com":       false,
		"ai..example.com":       false,
		"ai.example.com\nX: y":  false,
		"user@ai.example.com":   false,
		"*.serving.example.com": false,
		"ai.example.com:8443:1": false,
	} {
		err := Hosts(map[string]string{"gateway-host": v})
		if (err == nil) != ok {
			t.Errorf("%q: %v, want ok=%v", v, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--gateway-host") {
			t.Errorf("%q: %v does not name the flag", v, err)
		}
	}
}
