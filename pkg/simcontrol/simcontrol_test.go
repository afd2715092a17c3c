package simcontrol

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control.sock")
	handle := func(line string) error {
		if line == "ok" {
			return nil
		}
		return fmt.Errorf("unknown %q", line)
	}
	c, err := Serve(context.Background(), path, handle)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("socket mode = %v, want 0600", mode)
	}

	testCases := []struct {
		command, wantErr string
	}{
		{"ok", ""},
		{"bad", `unknown "bad"`},
		{"", `unknown ""`},
		{"two words", `unknown "two words"`},
	}
	for _, tc := range testCases {
		t.Run(tc.command, func(t *testing.T) {
			err := Send(path, tc.command)
			if got := fmt.Sprint(err); (err == nil) != (tc.wantErr == "") || (err != nil && got != tc.wantErr) {
				t.Errorf("Send(%q) = %v, want error %q", tc.command, err, tc.wantErr)
			}
		})
	}

	t.Run("several commands on one connection", func(t *testing.T) {
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := fmt.Fprint(conn, "ok\nx\nok\n"); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(conn)
		for _, want := range []string{"ok\n", "error: unknown \"x\"\n", "ok\n"} {
			got, err := r.ReadString('\n')
			if err != nil || got != want {
				t.Errorf("reply = %q, %v; want %q", got, err, want)
			}
		}
	})

	c.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("socket still present after Close: %v", err)
	}
	if err := Send(path, "ok"); err == nil {
		t.Error("Send after Close succeeded")
	}
}
