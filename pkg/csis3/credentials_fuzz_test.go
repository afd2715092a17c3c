package csis3

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// regionRE is what an accepted region looks like.
var regionRE = regexp.MustCompile(`^[a-z0-9-]+$`)

// checkAccepted asserts the properties of credentials that
// s3volume.CredentialsFromSecrets accepted: no control character anywhere,
// a region and endpoint that cannot add s3fs options, an rclone.conf that
// parses back to exactly the intended keys, and s3fs -o options and passwd
// file that say exactly what was meant, or an InvalidArgument from s3fs.
func checkAccepted(t *testing.T, c s3volume.Credentials) {
	t.Helper()
	ep := c.Endpoint.String()
	for name, v := range map[string]string{"accessKeyID": c.AccessKeyID, "secretAccessKey": c.SecretAccessKey, "region": c.Region, "endpoint": ep} {
		if s3volume.HasControl(v) {
			t.Fatalf("accepted %s with a control character", name)
		}
	}
	if !regionRE.MatchString(c.Region) {
		t.Fatalf("accepted region %q", c.Region)
	}
	if strings.ContainsAny(ep, ",=%\\;\"' ") || c.Endpoint.Path != "" || c.Endpoint.User != nil {
		t.Fatalf("accepted endpoint %q", ep)
	}
	if strings.ContainsRune(c.AccessKeyID, ':') {
		t.Fatalf("accepted access key ID with ':'")
	}
	conf, err := parseRcloneConf(rcloneConfig(c))
	if err != nil {
		t.Fatalf("rclone.conf does not parse: %v", err)
	}
	if diff := cmp.Diff(wantRcloneConf(c), conf); diff != "" {
		t.Fatalf("rclone.conf as rclone reads it (-want +got):\n%s", diff)
	}

	dir := filepath.Join(t.TempDir(), "v")
	cmd, err := s3fsMounter{bin: "s3fs"}.Command(Volume{Bucket: "data", UID: -1, GID: -1}, c, "/t", dir)
	if err != nil {
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("s3fs Command: %v", err)
		}
		return
	}
	opts := map[string]string{}
	for i := 3; i+1 < len(cmd.Args); i += 2 {
		for _, o := range strings.Split(cmd.Args[i+1], ",") { // as FUSE splits -o
			k, v, _ := strings.Cut(o, "=")
			if _, dup := opts[k]; dup {
				t.Fatalf("s3fs option %s given twice", k)
			}
			opts[k] = v
		}
	}
	if opts["url"] != ep || opts["endpoint"] != c.Region || opts["passwd_file"] != filepath.Join(dir, "passwd-s3fs") {
		t.Fatalf("s3fs options %v do not say url=%s endpoint=%s", opts, ep, c.Region)
	}
	passwd, err := os.ReadFile(filepath.Join(dir, "passwd-s3fs"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSuffix(string(passwd), "\n")
	ak, sk, _ := strings.Cut(line, ":")
	if strings.Count(line, ":") != 1 || strings.ContainsAny(line, "\n= \t") || ak != c.AccessKeyID || sk != c.SecretAccessKey {
		t.Fatalf("s3fs passwd line does not read back as the keys")
	}
}

// attackSeeds are values that would add rclone.conf keys or s3fs options.
var attackSeeds = []string{
	"x\ntype = alias\nremote = /", "x\r\nenv_auth = true", "us-east-1,iam_role=auto",
	"us-east-1,use_cache=/var/lib/kubelet,passwd_file=/etc/shadow", "https://h,iam_role=auto",
	"https://h%2Ciam_role=auto", "`x`", `"""x"""`, "a:b:c", "\x00", "\x7f", "[s3]",
}

func FuzzCredentialsFromSecrets(f *testing.F) {
	f.Add("AK", "SK", "https://s3.local:7070", "eu-1", "")
	f.Add("AK", "SK", "http://[::1]:9000", "", "true")
	for _, s := range attackSeeds {
		f.Add("AK", s, "s3.local", "", "")
		f.Add(s, "SK", "s3.local", "", "")
		f.Add("AK", "SK", s, "", "")
		f.Add("AK", "SK", "s3.local", s, "")
		f.Add("AK", "SK", "s3.local", "", s)
	}
	f.Fuzz(func(t *testing.T, ak, sk, endpoint, region, insecure string) {
		secrets := map[string]string{"accessKeyID": ak, "secretAccessKey": sk, "endpoint": endpoint, "region": region, "insecure": insecure}
		c, err := credentialsFrom(secrets)
		if err != nil {
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("error %v is not InvalidArgument", err)
			}
			checkNoValue(t, status.Convert(err).Message(), ak, sk, endpoint, region, insecure)
			return
		}
		checkAccepted(t, c)
	})
}

func FuzzS3cfg(f *testing.F) {
	f.Add("[default]\naccess_key = AK\nsecret_key = SK\nhost_base = s3.local:7070\nbucket_location = US\nuse_https = False\n")
	for _, s := range attackSeeds {
		f.Add("access_key = AK\nsecret_key = " + s + "\nhost_base = s3.local\n")
		f.Add("access_key = AK\nsecret_key = SK\nhost_base = " + s + "\n")
		f.Add("access_key = AK\nsecret_key = SK\nhost_base = s3.local\nbucket_location = " + s + "\n")
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := credentialsFrom(map[string]string{".s3cfg": text})
		if err != nil {
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("error %v is not InvalidArgument", err)
			}
			if !strings.HasPrefix(status.Convert(err).Message(), "secret key .s3cfg: ") {
				t.Fatalf("error %q does not name the key", status.Convert(err).Message())
			}
			return
		}
		checkAccepted(t, c)
	})
}

// checkNoValue fails if msg quotes one of the values. Short values are
// skipped: they occur in any message by chance.
func checkNoValue(t *testing.T, msg string, values ...string) {
	t.Helper()
	for _, v := range values {
		if len(strings.TrimSpace(v)) >= 6 && strings.Contains(msg, strings.TrimSpace(v)) {
			t.Fatalf("error %q quotes a value", msg)
		}
	}
}
