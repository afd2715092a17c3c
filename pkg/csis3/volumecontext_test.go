package csis3

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestVolumeFromContext(t *testing.T) {
	base := Volume{UID: -1, GID: -1, AllowOther: true, VFSCacheMode: "writes", Mounter: MounterRclone}
	with := func(f func(*Volume)) Volume { v := base; f(&v); return v }
	testCases := []struct {
		name    string
		id      string
		attrs   map[string]string
		want    Volume
		wantErr string
	}{
		{name: "bucket ID", id: "data", want: with(func(v *Volume) { v.ID, v.Bucket = "data", "data" })},
		{name: "bucket/prefix ID", id: "data/a/b/", want: with(func(v *Volume) { v.ID, v.Bucket, v.Prefix = "data/a/b/", "data", "a/b" })},
		{
			name: "static attributes win over the handle", id: "shim-ns-name",
			attrs: map[string]string{"bucket": "data", "prefix": "team/x", "readOnly": "true", "mounter": "s3fs", "options": `-o "max_stat_cache_size=100"`, "uid": "1000", "gid": "100", "mode": "0640", "allowOther": "false"},
			want:  Volume{ID: "shim-ns-name", Bucket: "data", Prefix: "team/x", ReadOnly: true, Mounter: "s3fs", Options: []string{"-o", "max_stat_cache_size=100"}, UID: 1000, GID: 100, Mode: 0o640, VFSCacheMode: "off"},
		},
		{name: "read-only volumes keep no write-back cache", id: "data", attrs: map[string]string{"readOnly": "true"}, want: with(func(v *Volume) { v.ID, v.Bucket, v.ReadOnly, v.VFSCacheMode = "data", "data", true, "off" })},
		{name: "a read-only volume's cache mode is its own", id: "data", attrs: map[string]string{"readOnly": "true", "vfsCacheMode": "full"}, want: with(func(v *Volume) { v.ID, v.Bucket, v.ReadOnly, v.VFSCacheMode = "data", "data", true, "full" })},
		{name: "read-write volumes cache writes", id: "data", attrs: map[string]string{"readOnly": "false"}, want: with(func(v *Volume) { v.ID, v.Bucket = "data", "data" })},
		{name: "dotdot prefix", id: "v", attrs: map[string]string{"bucket": "data", "prefix": "a/../../etc"}, wantErr: `must not contain ".."`},
		{name: "absolute prefix", id: "v", attrs: map[string]string{"bucket": "data", "prefix": "/etc"}, wantErr: "must be relative"},
		{name: "dotdot in ID", id: "data/../etc", wantErr: `must not contain ".."`},
		{name: "prefix without bucket", id: "v", attrs: map[string]string{"prefix": "x"}, wantErr: "needs bucket"},
		{name: "bad bucket", id: "v", attrs: map[string]string{"bucket": "Data_1"}, wantErr: "bucket name"},
		{name: "bad mode", id: "data", attrs: map[string]string{"mode": "999"}, wantErr: "mode"},
		{name: "bad uid", id: "data", attrs: map[string]string{"uid": "-3"}, wantErr: "uid"},
		{name: "bad cache mode", id: "data", attrs: map[string]string{"vfsCacheMode": "most"}, wantErr: "vfsCacheMode"},
		{name: "bad readOnly", id: "data", attrs: map[string]string{"readOnly": "yes please"}, wantErr: "readOnly"},
		{name: "unterminated quote", id: "data", attrs: map[string]string{"options": `"--a`}, wantErr: "quote"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := VolumeFromContext(tc.id, tc.attrs, MounterRclone)
			if tc.wantErr != "" {
				if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want InvalidArgument containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("volume (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSanitizeName(t *testing.T) {
	testCases := []struct{ name, want string }{
		{name: "pvc-1234", want: "pvc-1234"},
		{name: "PVC_Upper", want: "pvc-upper-" + sanitizeName("PVC_Upper")[len("pvc-upper-"):]},
	}
	for _, tc := range testCases {
		if got := sanitizeName(tc.name); got != tc.want {
			t.Errorf("sanitizeName(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	long := strings.Repeat("Very-Long-Name-", 10)
	for _, n := range []string{"PVC_Upper", long, "---", "a", "x.y..z"} {
		got := sanitizeName(n)
		if err := validateBucket(got); err != nil {
			t.Errorf("sanitizeName(%q) = %q, not a bucket name: %v", n, got, err)
		}
		if again := sanitizeName(n); again != got {
			t.Errorf("sanitizeName(%q) not deterministic: %q then %q", n, got, again)
		}
	}
	if sanitizeName("A_b") == sanitizeName("a-b") {
		t.Errorf("distinct names map to the same bucket")
	}
}
