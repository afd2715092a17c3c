package ociimage

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

func TestParseLdd(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    []string
		wantErr bool
	}{
		{
			name: "dynamic",
			out: "\tlinux-vdso.so.1 (0x00007ffd2b5f1000)\n" +
				"\tlibselinux.so.1 => /lib/x86_64-linux-gnu/libselinux.so.1 (0x00007f98cc9d8000)\n" +
				"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f98cc7f6000)\n" +
				"\tlibpcre2-8.so.0 => /lib/x86_64-linux-gnu/libpcre2-8.so.0 (0x00007f98cc75c000)\n" +
				"\t/lib64/ld-linux-x86-64.so.2 (0x00007f98cca3f000)\n",
			want: []string{
				"/lib/x86_64-linux-gnu/libc.so.6",
				"/lib/x86_64-linux-gnu/libpcre2-8.so.0",
				"/lib/x86_64-linux-gnu/libselinux.so.1",
				"/lib64/ld-linux-x86-64.so.2",
			},
		},
		{
			name: "vdso with arrow and no path",
			out: "\tlinux-gate.so.1 =>  (0xb7f8d000)\n" +
				"\tlibc.so.6 => /lib/i386-linux-gnu/libc.so.6 (0xb7dc0000)\n" +
				"\t/lib/ld-linux.so.2 (0xb7f8f000)\n",
			want: []string{"/lib/i386-linux-gnu/libc.so.6", "/lib/ld-linux.so.2"},
		},
		{
			name: "duplicates and unclean paths",
			out: "\tlibc.so.6 => /usr/lib/../lib/libc.so.6 (0x1)\n" +
				"\tlibc.so.6 => /usr/lib/libc.so.6 (0x2)\n",
			want: []string{"/usr/lib/libc.so.6"},
		},
		{
			name: "static pie",
			out:  "\tstatically linked\n",
		},
		{
			name: "not a dynamic executable",
			out:  "\tnot a dynamic executable\n",
		},
		{
			name: "empty",
		},
		{
			name:    "missing library",
			out:     "\tlibmissing.so.3 => not found\n\tlibc.so.6 => /lib/libc.so.6 (0x1)\n",
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLdd(tt.out)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseLdd() error = %v, wantErr %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("parseLdd() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAddHostPath(t *testing.T) {
	// A host tree that needs every kind of resolution:
	//   real/libx.so.1.2          the library
	//   real/libx.so.1 -> libx.so.1.2   relative file link
	//   lib -> real                     relative directory link (merged /usr)
	//   lib64 -> <abs>/lib              absolute directory link
	//   loop1 -> loop2, loop2 -> loop1
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	abs := func(p string) string { return filepath.Join(root, p) }
	must(os.Mkdir(abs("real"), 0o755))
	must(os.WriteFile(abs("real/libx.so.1.2"), []byte("ELF"), 0o644))
	must(os.Symlink("libx.so.1.2", abs("real/libx.so.1")))
	must(os.Symlink("real", abs("lib")))
	must(os.Symlink(abs("lib"), abs("lib64")))
	must(os.Symlink("loop2", abs("loop1")))
	must(os.Symlink("loop1", abs("loop2")))

	file := func(p string) entry { return entry{kind: kindFile, hostPath: abs(p)} }
	link := func(target string) entry { return entry{kind: kindSymlink, target: target} }
	tests := []struct {
		name    string
		path    string
		want    map[string]entry
		wantErr error
	}{
		{
			name: "plain file",
			path: "real/libx.so.1.2",
			want: map[string]entry{abs("real/libx.so.1.2"): file("real/libx.so.1.2")},
		},
		{
			name: "file link",
			path: "real/libx.so.1",
			want: map[string]entry{
				abs("real/libx.so.1"):   link("libx.so.1.2"),
				abs("real/libx.so.1.2"): file("real/libx.so.1.2"),
			},
		},
		{
			name: "directory link then file link",
			path: "lib/libx.so.1",
			want: map[string]entry{
				abs("lib"):              link("real"),
				abs("real/libx.so.1"):   link("libx.so.1.2"),
				abs("real/libx.so.1.2"): file("real/libx.so.1.2"),
			},
		},
		{
			name: "absolute link to a link",
			path: "lib64/libx.so.1.2",
			want: map[string]entry{
				abs("lib64"):            link(abs("lib")),
				abs("lib"):              link("real"),
				abs("real/libx.so.1.2"): file("real/libx.so.1.2"),
			},
		},
		{
			name:    "loop",
			path:    "loop1",
			wantErr: syscall.ELOOP,
		},
		{
			name:    "missing",
			path:    "real/nope.so",
			wantErr: os.ErrNotExist,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var img Image
			err := img.addHostPath(abs(tt.path))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("addHostPath() error = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				return
			}
			if len(img.entries) != len(tt.want) {
				t.Errorf("got %d entries %v, want %d", len(img.entries), img.entries, len(tt.want))
			}
			for p, want := range tt.want {
				got, ok := img.entries[p]
				if !ok {
					t.Errorf("no entry at %s", p)
					continue
				}
				if got.kind != want.kind || got.hostPath != want.hostPath || got.target != want.target {
					t.Errorf("entry %s = %+v, want %+v", p, got, want)
				}
			}
		})
	}
}

func TestAddExecutableNotELF(t *testing.T) {
	p := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var img Image
	if err := img.AddExecutable(p, "/script"); err == nil {
		t.Fatal("AddExecutable of a shell script succeeded, want an error")
	}
	if len(img.entries) != 0 {
		t.Errorf("failed AddExecutable left entries %v", img.entries)
	}
}
