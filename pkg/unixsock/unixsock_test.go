package unixsock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/accelstack/accelstack/test/testutil"
)

func TestListenMode(t *testing.T) {
	dir := testutil.ShortDir(t)
	path := filepath.Join(dir, "x.sock")
	if err := os.WriteFile(path, nil, 0o666); err != nil { // a stale file is replaced
		t.Fatal(err)
	}
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want a 0600 socket", fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the socket", len(entries))
	}
}
