package csis3

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

func TestMounterCommands(t *testing.T) {
	creds := s3volume.Credentials{AccessKeyID: "AKID", SecretAccessKey: "TOPSECRET", Endpoint: &url.URL{Scheme: "http", Host: "s3:7070"}, Region: "r1"}
	vol := Volume{Bucket: "data", Prefix: "team", UID: 1000, GID: -1, Mode: 0o640, AllowOther: true, ReadOnly: true, VFSCacheMode: "full", Options: []string{"--dir-cache-time=5s"}}
	testCases := []struct {
		name     string
		m        Mounter
		vol      Volume
		wantArgs []string
		wantFile string
	}{
		{
			name: "rclone", m: rcloneMounter{bin: "/bin/rclone"}, vol: vol, wantFile: "rclone.conf",
			wantArgs: []string{"mount2", "s3,type=s3,env_auth=false:data/team", "/stage", "--config", "DIR/rclone.conf", "--cache-dir", "DIR/cache",
				"--vfs-cache-mode", "full", "--vfs-cache-max-size", "10G", "--vfs-cache-min-free-space", "10G", "--dir-cache-time", "30s", "--contimeout", "5s", "--timeout", "30s",
				"--low-level-retries", "3", "--retries", "1", "--vfs-write-back", "1s", "--s3-list-version", "2", "--allow-other", "--read-only", "--uid", "1000",
				"--file-perms", "0640", "--dir-perms", "0750", "--dir-cache-time=5s"},
		},
		{
			name: "s3fs", m: s3fsMounter{bin: "/bin/s3fs"}, vol: with(vol, func(v *Volume) { v.Options = []string{"-o", "max_stat_cache_size=10"} }), wantFile: "passwd-s3fs",
			wantArgs: []string{"data:/team", "/stage", "-f", "-o", "passwd_file=DIR/passwd-s3fs", "-o", "url=http://s3:7070",
				"-o", "endpoint=r1", "-o", "connect_timeout=5", "-o", "readwrite_timeout=30", "-o", "retries=2",
				"-o", "stat_cache_expire=30", "-o", "use_path_request_style", "-o", "allow_other", "-o", "ro",
				"-o", "uid=1000", "-o", "umask=0027", "-o", "max_stat_cache_size=10"},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "vol")
			cmd, err := tc.m.Command(tc.vol, creds, "/stage", dir)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.ReplaceAll(strings.Join(cmd.Args, "\x00"), dir, "DIR"), "\x00")
			if diff := cmp.Diff(tc.wantArgs, got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			// All of the command, which the launcher runs as it is: path,
			// argv and any environment it may ever carry.
			all, err := json.Marshal(cmd)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{"TOPSECRET", "AKID"} {
				if strings.Contains(string(all), secret) {
					t.Errorf("the command %s holds a credential", all)
				}
			}
			st, err := os.Stat(filepath.Join(dir, tc.wantFile))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o600 {
				t.Errorf("credential file mode = %v, want 0600", st.Mode().Perm())
			}
		})
	}
}

// TestRcloneListsWithV2 checks that rclone volumes list with ListObjects v2
// (rclone's own default for S3 servers of no known provider is v1, slower
// on a fresh mount's first ls) and that a volume's options can go back to v1.
func TestRcloneListsWithV2(t *testing.T) {
	creds := s3volume.Credentials{AccessKeyID: "AKID", SecretAccessKey: "TOPSECRET", Endpoint: &url.URL{Scheme: "http", Host: "s3:7070"}, Region: "r1"}
	for _, tc := range []struct {
		name string
		opts []string
		want string
	}{
		{name: "default", want: "2"},
		{name: "volume option", opts: []string{"--s3-list-version=1"}, want: "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vol := Volume{Bucket: "data", UID: -1, GID: -1, VFSCacheMode: "writes", Options: tc.opts}
			if err := (rcloneMounter{}).CheckOptions(vol.Options); err != nil {
				t.Fatal(err)
			}
			cmd, err := rcloneMounter{bin: "/bin/rclone"}.Command(vol, creds, "/stage", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			// rclone takes the last value of a repeated flag.
			got := ""
			for i, a := range cmd.Args {
				if a == "--s3-list-version" && i+1 < len(cmd.Args) {
					got = cmd.Args[i+1]
				} else if v, ok := strings.CutPrefix(a, "--s3-list-version="); ok {
					got = v
				}
			}
			if got != tc.want {
				t.Errorf("--s3-list-version = %q, want %q in %q", got, tc.want, cmd.Args)
			}
		})
	}
}

// with returns v changed by f.
func with(v Volume, f func(*Volume)) Volume { f(&v); return v }

func TestMounterAllowlist(t *testing.T) {
	testCases := []struct {
		mounter string
		opts    []string
		wantErr string
	}{
		{mounter: MounterRclone, opts: []string{"--vfs-cache-mode=full", "--uid=3"}},
		{mounter: MounterRclone, opts: []string{"--vfs-read-chunk-streams=4", "--vfs-read-chunk-size=16M", "--vfs-write-back=5s", "--s3-upload-concurrency=8"}},
		{mounter: MounterRclone, opts: []string{"--config=/etc/passwd"}, wantErr: "--config"},
		{mounter: MounterRclone, opts: []string{"--vfs-read-chunk-streams", "4"}, wantErr: `"4"`},
		{mounter: MounterRclone, opts: []string{"--rc"}, wantErr: "--rc"},
		{mounter: MounterS3fs, opts: []string{"-o", "uid=1,gid=2", "-oallow_other"}},
		{mounter: MounterS3fs, opts: []string{"-o", "passwd_file=/root/x"}, wantErr: "passwd_file"},
		{mounter: MounterS3fs, opts: []string{"use_cache=/tmp"}, wantErr: "use_cache"},
		{mounter: "goofys", wantErr: "unknown mounter"},
	}
	for _, tc := range testCases {
		t.Run(tc.mounter+strings.Join(tc.opts, ","), func(t *testing.T) {
			_, err := mounterFor(DefaultConfig(), Volume{Mounter: tc.mounter, Options: tc.opts})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("mounterFor = %v, want nil", err)
				}
				return
			}
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("mounterFor = %v, want InvalidArgument containing %q", err, tc.wantErr)
			}
		})
	}
}
