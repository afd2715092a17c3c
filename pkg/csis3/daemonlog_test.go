package csis3

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLogTail quotes the end of a large log with secrets masked, whole or
// cut by the start of the quoted window.
func TestLogTail(t *testing.T) {
	const secret = "S3CR3T-0123456789abcdef"
	testCases := []struct {
		name      string
		log       string
		wantIn    string
		wantLen   int
		forbidden []string
	}{
		{name: "short log", log: "error: key " + secret + " refused\n", wantIn: "error: key *** refused"},
		{
			name:   "large log, secret at the end",
			log:    strings.Repeat("x", 4<<20) + "\nsecret_access_key = " + secret + "\nmount failed\n",
			wantIn: "secret_access_key = ***\nmount failed", wantLen: logTailBytes,
		},
		{
			// The window of logTailBytes starts three bytes into the secret.
			name:    "secret cut by the window",
			log:     strings.Repeat("x", 1<<20) + secret + strings.Repeat("y", logTailBytes-len(secret)+3),
			wantLen: logTailBytes,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "daemon.log")
			if err := os.WriteFile(p, []byte(tc.log), 0o600); err != nil {
				t.Fatal(err)
			}
			got := logTail(p, []string{"", "other", secret})
			if !strings.Contains(got, tc.wantIn) {
				t.Errorf("logTail() = %q, want it to contain %q", got, tc.wantIn)
			}
			if tc.wantLen > 0 && len(got) > tc.wantLen {
				t.Errorf("len(logTail()) = %d, want at most %d", len(got), tc.wantLen)
			}
			for i := 0; i+4 <= len(secret); i++ {
				if part := secret[i : i+4]; strings.Contains(got, part) {
					t.Fatalf("logTail() = %q quotes %q of the secret", got, part)
				}
			}
		})
	}
	if got := logTail(filepath.Join(t.TempDir(), "missing"), nil); got != "(no log)" {
		t.Errorf("logTail(missing) = %q, want (no log)", got)
	}
}

// TestStoredSecrets reads the credentials that the mounters wrote into a
// state dir, which mask the log when healing gets no secrets.
func TestStoredSecrets(t *testing.T) {
	dir := t.TempDir()
	conf := "[s3]\ntype = s3\naccess_key_id = AKIA-RC\nsecret_access_key = `rclone-secret `\nendpoint = http://s3\n"
	if err := os.WriteFile(filepath.Join(dir, "rclone.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "passwd-s3fs"), []byte("AKIA-S3FS:s3fs-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := storedSecrets(dir)
	for _, want := range []string{"AKIA-RC", "rclone-secret ", "AKIA-S3FS", "s3fs-secret"} {
		if !slices.Contains(got, want) {
			t.Errorf("storedSecrets() = %q, want %q in it", got, want)
		}
	}
	if slices.Contains(got, "http://s3") || slices.Contains(got, "s3") {
		t.Errorf("storedSecrets() = %q, want no endpoint or type", got)
	}
}
