package csis3

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// prefixScopedS3 is an S3 server whose only key may list bucket "data"
// under "team/x/" and nothing else, as an IAM policy with an s3:prefix
// condition allows. It records the prefixes asked for.
func prefixScopedS3(t *testing.T, asked *[]string) *url.URL {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		*asked = append(*asked, q.Get("prefix"))
		w.Header().Set("Content-Type", "application/xml")
		if r.Method != http.MethodGet || r.URL.Path != "/data/" || q.Get("prefix") != "team/x/" {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`))
			return
		}
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
			`<Name>data</Name><Prefix>team/x/</Prefix><KeyCount>0</KeyCount><MaxKeys>1</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>`))
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestCheckAccessPrefixScoped(t *testing.T) {
	testCases := []struct {
		name           string
		bucket, prefix string
		wantCode       codes.Code
	}{
		{name: "own prefix", bucket: "data", prefix: "team/x", wantCode: codes.OK},
		{name: "other prefix", bucket: "data", prefix: "team/y", wantCode: codes.PermissionDenied},
		{name: "whole bucket", bucket: "data", wantCode: codes.PermissionDenied},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			cl, err := newS3Client(s3volume.Credentials{AccessKeyID: "AK", SecretAccessKey: "SK", Endpoint: prefixScopedS3(t, &asked), Region: s3volume.DefaultRegion})
			if err != nil {
				t.Fatal(err)
			}
			err = checkAccess(context.Background(), cl, tc.bucket, tc.prefix)
			if got := status.Code(err); got != tc.wantCode {
				t.Fatalf("checkAccess = %v (asked for prefixes %q), want code %v", err, asked, tc.wantCode)
			}
		})
	}
}
