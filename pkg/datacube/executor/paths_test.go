package executor

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckRelPath(t *testing.T) {
	testCases := []struct {
		rel     string
		wantErr bool
	}{
		{rel: "a.txt"},
		{rel: "dir/sub/a.txt"},
		{rel: "dir//a"},
		{rel: "..a/b..c"},
		{rel: "", wantErr: true},
		{rel: "/etc/passwd", wantErr: true},
		{rel: "../x", wantErr: true},
		{rel: "a/../../x", wantErr: true},
		{rel: "a/..", wantErr: true},
		{rel: "./a", wantErr: true},
		{rel: `a\..\x`, wantErr: true},
		{rel: "a\x00b", wantErr: true},
	}
	for _, tc := range testCases {
		t.Run(tc.rel, func(t *testing.T) {
			err := CheckRelPath(tc.rel)
			if (err != nil) != tc.wantErr {
				t.Fatalf("CheckRelPath(%q) = %v, want error %v", tc.rel, err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrUnsafePath) {
				t.Errorf("error %v is not ErrUnsafePath", err)
			}
		})
	}
}

func TestResolvePVCPath(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	testCases := []struct {
		name    string
		path    string
		want    string
		wantErr bool
	}{
		{name: "root", path: root, want: root},
		{name: "subdir", path: root + "/data/", want: root + "/data"},
		{name: "not yet existing", path: root + "/new/dir", want: root + "/new/dir"},
		{name: "dot dot inside", path: root + "/data/../data", wantErr: true},
		{name: "dot dot out", path: root + "/../etc", wantErr: true},
		{name: "relative", path: "data", wantErr: true},
		{name: "empty", path: "", wantErr: true},
		{name: "outside", path: outside, wantErr: true},
		{name: "prefix sibling", path: root + "-other", wantErr: true},
		{name: "symlink out", path: root + "/escape/x", wantErr: true},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolvePVCPath(root, tc.path)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ResolvePVCPath(%q) = %q, %v; want error %v", tc.path, got, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ResolvePVCPath(%q) = %q, want %q", tc.path, got, tc.want)
			}
		})
	}
}

// FuzzJoinRel checks that a relative path JoinRel accepts never leads
// outside, nor to, the directory it is joined to, and that ResolvePVCPath
// only accepts paths inside its root.
func FuzzJoinRel(f *testing.F) {
	for _, s := range []string{"a", "a/b", "a//b", "../x", "a/../../x", "./a", "a/.", "/etc", `a\..\b`, "..a", "a/..b/c", "a/", "//", "a\x00b", "..", "."} {
		f.Add(s)
	}
	const root = "/datacube/pvc"
	f.Fuzz(func(t *testing.T, rel string) {
		p, err := JoinRel(root, rel)
		if err == nil {
			if !within(root, p) || p == root {
				t.Fatalf("JoinRel(%q, %q) = %q: outside the root or the root itself", root, rel, p)
			}
			if !filepath.IsLocal(filepath.FromSlash(rel)) {
				t.Fatalf("JoinRel accepted %q, which is not a local path", rel)
			}
		}
		if q, err := ResolvePVCPath(root, root+"/"+rel); err == nil && !within(root, q) {
			t.Fatalf("ResolvePVCPath(%q) = %q: outside the root", root+"/"+rel, q)
		}
		if q, err := ResolvePVCPath(root, rel); err == nil && !within(root, q) {
			t.Fatalf("ResolvePVCPath(%q) = %q: outside the root", rel, q)
		}
	})
}
