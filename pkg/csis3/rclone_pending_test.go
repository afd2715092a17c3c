package csis3

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRclonePendingFailsClosed(t *testing.T) {
	write := func(t *testing.T, dir, name, body string) {
		t.Helper()
		p := filepath.Join(dir, "cache", "vfsMeta", "s3", "bucket", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("no cache", func(t *testing.T) {
		n, err := rcloneMounter{}.Pending(t.TempDir())
		if err != nil || n != 0 {
			t.Fatalf("Pending = %d, %v; want 0, nil", n, err)
		}
	})
	t.Run("dirty and clean", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "a", `{"Dirty":true,"Size":3}`)
		write(t, dir, "b", `{"Dirty":false,"Size":3}`)
		write(t, dir, "c", `{"Dirty":true}`)
		n, err := rcloneMounter{}.Pending(dir)
		if err != nil || n != 2 {
			t.Fatalf("Pending = %d, %v; want 2, nil", n, err)
		}
	})
	for name, body := range map[string]string{"torn write": `{"Dirty":tr`, "empty": ``} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a", `{"Dirty":false}`)
			write(t, dir, "b", body)
			if n, err := (rcloneMounter{}).Pending(dir); err != nil || n != 1 {
				t.Fatalf("Pending = %d, %v; want 1, nil: a half-written file counts as pending", n, err)
			}
		})
	}
	t.Run("unknown format", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "a", `{"Dirty":false}`)
		write(t, dir, "b", `{"Modified":true}`)
		if n, err := (rcloneMounter{}).Pending(dir); err == nil {
			t.Fatalf("Pending = %d, nil; want an error for metadata without Dirty", n)
		}
	})
}
