package csis3

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/accelstack/accelstack/pkg/csis3/s3volume"
)

// s3Timeout bounds each S3 call the driver itself makes.
const s3Timeout = 30 * time.Second

// credentialsFrom reads the credentials of a request's secrets
// (s3volume.CredentialsFromSecrets); unusable secrets are InvalidArgument.
func credentialsFrom(secrets map[string]string) (s3volume.Credentials, error) {
	c, err := s3volume.CredentialsFromSecrets(secrets)
	if err != nil {
		return c, status.Error(codes.InvalidArgument, err.Error())
	}
	return c, nil
}

// s3ClientFrom returns an S3 client for the credentials of a request's
// secrets, and those credentials.
func s3ClientFrom(secrets map[string]string) (*minio.Client, s3volume.Credentials, error) {
	creds, err := credentialsFrom(secrets)
	if err != nil {
		return nil, creds, err
	}
	cl, err := newS3Client(creds)
	return cl, creds, err
}

// newS3Client returns an S3 client for c.
func newS3Client(c s3volume.Credentials) (*minio.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = s3Timeout
	if c.Endpoint.Scheme == "https" {
		tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.Insecure} //nolint:gosec // opt-in per secret for self-signed endpoints
		if len(c.CABundle) > 0 {
			pool, err := x509.SystemCertPool()
			if err != nil {
				pool = x509.NewCertPool()
			}
			pool.AppendCertsFromPEM(c.CABundle)
			tlsCfg.RootCAs = pool
		}
		tr.TLSClientConfig = tlsCfg
	}
	lookup := minio.BucketLookupPath
	if c.VirtualHost {
		lookup = minio.BucketLookupDNS
	}
	cl, err := minio.New(c.Endpoint.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(c.AccessKeyID, c.SecretAccessKey, ""),
		Secure:       c.Endpoint.Scheme == "https",
		Region:       c.Region,
		BucketLookup: lookup,
		Transport:    tr,
		MaxRetries:   2,
	})
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "S3 client for %s: %v", c.Endpoint, err)
	}
	return cl, nil
}

// s3Status maps an S3 error to a gRPC status: refused credentials are
// PermissionDenied, a missing bucket NotFound, timeouts DeadlineExceeded,
// anything else (the server down, 5xx) Unavailable.
func s3Status(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	code := codes.Unavailable
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "AllAccessDisabled":
		code = codes.PermissionDenied
	case "NoSuchBucket":
		code = codes.NotFound
	case "InvalidBucketName", "InvalidArgument":
		code = codes.InvalidArgument
	default:
		if resp.StatusCode == http.StatusForbidden {
			code = codes.PermissionDenied
		}
		if errors.Is(err, context.DeadlineExceeded) {
			code = codes.DeadlineExceeded
		}
	}
	msg := resp.Message
	if msg == "" {
		msg = err.Error()
	}
	if resp.Code != "" {
		msg = resp.Code + ": " + msg
	}
	return status.Errorf(code, "%s: %s", sprintf(format, args...), msg)
}

// checkAccess makes one cheap authenticated call on the volume's bucket, so
// refused credentials and missing buckets fail a request before anything is
// mounted or created. It lists under prefix (the volume's, empty for a
// whole bucket), never the bucket's root, so keys whose policy only allows
// listing their own prefix pass.
func checkAccess(ctx context.Context, cl *minio.Client, bucket, prefix string) error {
	ctx, cancel := context.WithTimeout(ctx, s3Timeout)
	defer cancel()
	opts := minio.ListObjectsOptions{MaxKeys: 1}
	if prefix != "" {
		opts.Prefix = prefix + "/"
	}
	// The first result is enough; cancel stops the listing.
	if obj, ok := <-cl.ListObjects(ctx, bucket, opts); ok && obj.Err != nil {
		return s3Status(obj.Err, "checking access to bucket %s", bucket)
	}
	return nil
}
