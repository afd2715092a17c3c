package s3volume

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCredentialsFromSecrets(t *testing.T) {
	testCases := []struct {
		name     string
		secrets  map[string]string
		want     string // String() of the credentials plus the flags below
		wantVH   bool
		wantIns  bool
		wantKeys [2]string
		wantErr  string
	}{
		{
			name:     "s3-env",
			secrets:  map[string]string{"accessKeyID": "AK", "secretAccessKey": "SK", "endpoint": "http://s3.local:7070", "region": "eu-1"},
			want:     "{endpoint: http://s3.local:7070, region: eu-1, accessKeyID: ***, secretAccessKey: ***}",
			wantKeys: [2]string{"AK", "SK"},
		},
		{
			name:     "s3-env without scheme is https, default region, insecure",
			secrets:  map[string]string{"accessKeyID": "AK", "secretAccessKey": "SK", "endpoint": "s3.local", "insecure": "true"},
			want:     "{endpoint: https://s3.local, region: us-east-1, accessKeyID: ***, secretAccessKey: ***}",
			wantIns:  true,
			wantKeys: [2]string{"AK", "SK"},
		},
		{
			name: "s3cfg",
			secrets: map[string]string{".s3cfg": "# made by s3cmd\n[default]\naccess_key = AK\nsecret_key = SK\nhost_base = s3.local:7070\n" +
				"host_bucket = %(bucket)s.s3.local:7070\nuse_https = False\nbucket_location = US\n[other]\naccess_key = X\n"},
			want:     "{endpoint: http://s3.local:7070, region: us-east-1, accessKeyID: ***, secretAccessKey: ***}",
			wantVH:   true,
			wantKeys: [2]string{"AK", "SK"},
		},
		{
			name:     "s3cfg wins over s3-env keys",
			secrets:  map[string]string{".s3cfg": "access_key=AK\nsecret_key=SK\nhost_base=https://s3.local\n", "accessKeyID": "other"},
			want:     "{endpoint: https://s3.local, region: us-east-1, accessKeyID: ***, secretAccessKey: ***}",
			wantKeys: [2]string{"AK", "SK"},
		},
		{name: "empty", secrets: nil, wantErr: "no S3 credentials"},
		{name: "missing secret key", secrets: map[string]string{"accessKeyID": "AK", "endpoint": "s3.local"}, wantErr: "secret key secretAccessKey: missing"},
		{name: "missing endpoint", secrets: map[string]string{"accessKeyID": "AK", "secretAccessKey": "SK"}, wantErr: "secret key endpoint: missing"},
		{name: "bad endpoint", secrets: map[string]string{"accessKeyID": "AK", "secretAccessKey": "SK", "endpoint": "ftp://x"}, wantErr: "secret key endpoint"},
		{name: "endpoint with path", secrets: map[string]string{"accessKeyID": "AK", "secretAccessKey": "SK", "endpoint": "http://x/bucket"}, wantErr: "secret key endpoint"},
		{name: "bad insecure", secrets: map[string]string{"accessKeyID": "AK", "secretAccessKey": "SK", "endpoint": "x", "insecure": "sometimes"}, wantErr: "secret key insecure"},
		{name: "bad CA", secrets: map[string]string{"accessKeyID": "AK", "secretAccessKey": "SK", "endpoint": "x", "caBundle": "not pem"}, wantErr: "secret key caBundle"},
		{name: "s3cfg garbage line", secrets: map[string]string{".s3cfg": "access_key = AK\nthis is not ini\n"}, wantErr: "secret key .s3cfg: line 2"},
		{name: "s3cfg missing secret", secrets: map[string]string{".s3cfg": "access_key = AK\nhost_base = x\n"}, wantErr: "secret key .s3cfg: secret_key is missing"},
		{name: "s3cfg bad use_https", secrets: map[string]string{".s3cfg": "access_key=AK\nsecret_key=SK\nhost_base=x\nuse_https=perhaps\n"}, wantErr: "use_https"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CredentialsFromSecrets(tc.secrets)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "SK") {
					t.Errorf("error %q contains the secret", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.String()); diff != "" {
				t.Errorf("credentials (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantKeys, [2]string{got.AccessKeyID, got.SecretAccessKey}); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if got.VirtualHost != tc.wantVH || got.Insecure != tc.wantIns {
				t.Errorf("virtualHost, insecure = %t, %t; want %t, %t", got.VirtualHost, got.Insecure, tc.wantVH, tc.wantIns)
			}
		})
	}
}

// TestCredentialsRefuseInjection feeds values that would add keys to
// rclone.conf or options to s3fs's -o list: each is an error naming the
// key at fault, and the error never quotes the value.
func TestCredentialsRefuseInjection(t *testing.T) {
	good := map[string]string{"accessKeyID": "AK", "secretAccessKey": "SK", "endpoint": "https://s3.local:7070", "region": "eu-1"}
	s3cfg := func(extra string) map[string]string {
		return map[string]string{".s3cfg": "access_key = AK\nsecret_key = SK\nhost_base = s3.local\n" + extra}
	}
	testCases := []struct {
		name    string
		secrets map[string]string
		bad     string // the hostile value, which must not appear in the error
		wantKey string
	}{
		{name: "secret key with newlines", secrets: with2(good, "secretAccessKey", "x\ntype = alias\nremote = /"), bad: "type = alias", wantKey: "secret key secretAccessKey:"},
		{name: "secret key with carriage return", secrets: with2(good, "secretAccessKey", "x\renv_auth = true"), bad: "env_auth", wantKey: "secret key secretAccessKey:"},
		{name: "access key with NUL", secrets: with2(good, "accessKeyID", "AK\x00zz"), bad: "zz", wantKey: "secret key accessKeyID:"},
		{name: "access key with DEL", secrets: with2(good, "accessKeyID", "AK\x7fzz"), bad: "zz", wantKey: "secret key accessKeyID:"},
		{name: "access key with colon", secrets: with2(good, "accessKeyID", "bucket:AKzz"), bad: "AKzz", wantKey: "secret key accessKeyID:"},
		{name: "region with s3fs option", secrets: with2(good, "region", "us-east-1,iam_role=auto"), bad: "iam_role", wantKey: "secret key region:"},
		{name: "region with cache option", secrets: with2(good, "region", "us-east-1,use_cache=/var/lib/kubelet"), bad: "use_cache", wantKey: "secret key region:"},
		{name: "region with newline", secrets: with2(good, "region", "r\nprovider = AWS"), bad: "provider", wantKey: "secret key region:"},
		{name: "region upper case", secrets: with2(good, "region", "EU_WEST"), bad: "EU_WEST", wantKey: "secret key region:"},
		{name: "endpoint host with option", secrets: with2(good, "endpoint", "https://h,iam_role=auto"), bad: "iam_role", wantKey: "secret key endpoint:"},
		{name: "endpoint host with semicolon", secrets: with2(good, "endpoint", "https://h;zz:80"), bad: "zz", wantKey: "secret key endpoint:"},
		{name: "endpoint host percent-encoded comma", secrets: with2(good, "endpoint", "https://h%2Ciam_role=auto"), bad: "iam_role", wantKey: "secret key endpoint:"},
		{name: "endpoint with newline", secrets: with2(good, "endpoint", "https://h\nenv_auth = true"), bad: "env_auth", wantKey: "secret key endpoint:"},
		{name: "endpoint bad port", secrets: with2(good, "endpoint", "https://h:99999"), bad: "99999", wantKey: "secret key endpoint:"},
		{name: "endpoint with fragment", secrets: with2(good, "endpoint", "https://h#zz"), bad: "zz", wantKey: "secret key endpoint:"},
		{name: "insecure with newline", secrets: with2(good, "insecure", "true\nzz"), bad: "zz", wantKey: "secret key insecure:"},
		{name: "s3cfg secret with carriage return", secrets: map[string]string{".s3cfg": "access_key = AK\nsecret_key = x\rtype = alias\nhost_base = s3.local\n"}, bad: "alias", wantKey: "secret key .s3cfg: line 2"},
		{name: "s3cfg secret with NUL", secrets: map[string]string{".s3cfg": "access_key = AK\nsecret_key = x\x00zz\nhost_base = s3.local\n"}, bad: "zz", wantKey: "secret key .s3cfg: line 2"},
		{name: "s3cfg bucket_location option", secrets: s3cfg("bucket_location = us-east-1,iam_role=auto\n"), bad: "iam_role", wantKey: "secret key .s3cfg: bucket_location"},
		{name: "s3cfg host_base option", secrets: s3cfg("host_base = h,iam_role=auto\n"), bad: "iam_role", wantKey: "secret key .s3cfg: host_base"},
		{name: "s3cfg access key colon", secrets: map[string]string{".s3cfg": "access_key = b:zz\nsecret_key = SK\nhost_base = s3.local\n"}, bad: "b:zz", wantKey: "secret key .s3cfg: access_key"},
		{name: "s3cfg bad boolean", secrets: s3cfg("use_https = zz\n"), bad: "zz", wantKey: "secret key .s3cfg: use_https"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CredentialsFromSecrets(tc.secrets)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.wantKey) {
				t.Errorf("error %q does not start with %q", msg, tc.wantKey)
			}
			if strings.Contains(msg, tc.bad) {
				t.Errorf("error %q quotes the value", msg)
			}
		})
	}
}

func TestCredentialsEndpoints(t *testing.T) {
	testCases := []struct{ in, want string }{
		{in: "s3.local", want: "https://s3.local"},
		{in: "http://S3-a.b_c.local:7070/", want: "http://S3-a.b_c.local:7070"},
		{in: "http://10.0.0.1:9000", want: "http://10.0.0.1:9000"},
		{in: "https://[::1]:9000", want: "https://[::1]:9000"},
		{in: "https://[fd00::0001]", want: "https://[fd00::1]"},
	}
	for _, tc := range testCases {
		t.Run(tc.in, func(t *testing.T) {
			c, err := CredentialsFromSecrets(map[string]string{"accessKeyID": "AK", "secretAccessKey": "S/K+=", "endpoint": tc.in})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Endpoint.String(); got != tc.want {
				t.Errorf("endpoint = %s, want %s", got, tc.want)
			}
		})
	}
}

// with2 returns a copy of m with k set to v.
func with2(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for key, val := range m {
		if key != k {
			out[key] = val
		}
	}
	return out
}
