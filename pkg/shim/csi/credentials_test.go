package csi

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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
				if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want InvalidArgument containing %q", err, tc.wantErr)
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
