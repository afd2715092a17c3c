package executor

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3Location is a parsed s3-uri: a bucket and a key that is an object or,
// ending in "/" or empty, a prefix.
type s3Location struct {
	Bucket, Key string
}

// parseS3URI parses s3://bucket[/key].
func parseS3URI(uri string) (s3Location, error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return s3Location{}, fmt.Errorf("invalid %s %q: must start with s3://", OptS3URI, uri)
	}
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return s3Location{}, fmt.Errorf("invalid %s %q: no bucket", OptS3URI, uri)
	}
	if strings.HasPrefix(key, "/") {
		return s3Location{}, fmt.Errorf("invalid %s %q: the key must not start with /", OptS3URI, uri)
	}
	for _, elem := range strings.Split(strings.TrimSuffix(key, "/"), "/") {
		if elem == ".." || elem == "." {
			return s3Location{}, fmt.Errorf("%w %s %q: must not contain %q", ErrUnsafePath, OptS3URI, uri, elem)
		}
	}
	return s3Location{Bucket: bucket, Key: key}, nil
}

// IsPrefix reports whether the key names a prefix rather than an object.
func (l s3Location) IsPrefix() bool { return l.Key == "" || strings.HasSuffix(l.Key, "/") }

// s3Endpoint is the parsed s3-endpoint: host[:port] and whether TLS is used.
type s3Endpoint struct {
	Host   string
	Secure bool
}

// parseS3Endpoint accepts http://host[:port], https://host[:port] or a bare
// host[:port] (HTTPS).
func parseS3Endpoint(s string) (s3Endpoint, error) {
	if s == "" {
		return s3Endpoint{}, fmt.Errorf("option %s is required", OptS3Endpoint)
	}
	if !strings.Contains(s, "://") {
		return s3Endpoint{Host: strings.TrimSuffix(s, "/"), Secure: true}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return s3Endpoint{}, fmt.Errorf("invalid %s %q: %w", OptS3Endpoint, s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return s3Endpoint{}, fmt.Errorf("invalid %s %q: want http[s]://host[:port]", OptS3Endpoint, s)
	}
	return s3Endpoint{Host: u.Host, Secure: u.Scheme == "https"}, nil
}

// URL returns the endpoint as a URL.
func (e s3Endpoint) URL() *url.URL {
	scheme := "http"
	if e.Secure {
		scheme = "https"
	}
	return &url.URL{Scheme: scheme, Host: e.Host}
}

// s3Side is an S3 end of a transfer.
type s3Side struct {
	client     *minio.Client
	endpoint   s3Endpoint
	loc        s3Location
	noCheck    bool
	allowEmpty bool
	partSize   int64
	numThreads int
}

// newS3Side builds the client of an S3 side from its options. Addressing is
// path-style, which every S3 implementation serves; the region is $AWS_REGION,
// else looked up from the bucket. Proxies come from the environment
// (HTTPS_PROXY, HTTP_PROXY, NO_PROXY).
func newS3Side(side Side, cfg *Config) (*s3Side, error) {
	ep, err := parseS3Endpoint(side.Options[OptS3Endpoint])
	if err != nil {
		return nil, err
	}
	loc, err := parseS3URI(side.Options[OptS3URI])
	if err != nil {
		return nil, err
	}
	id, secret := side.Options[OptS3AccessKeyID], side.Options[OptS3SecretAccessKey]
	var creds *credentials.Credentials
	if id == "" && secret == "" {
		creds = credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	} else {
		creds = credentials.NewStaticV4(id, secret, "")
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   cfg.ConnectTimeout,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: 5 * time.Minute,
		DisableCompression:    true,
	}
	client, err := minio.New(ep.Host, &minio.Options{
		Creds:        creds,
		Secure:       ep.Secure,
		Region:       os.Getenv("AWS_REGION"),
		BucketLookup: minio.BucketLookupPath,
		Transport:    tr,
		MaxRetries:   3,
	})
	if err != nil {
		return nil, fmt.Errorf("creating S3 client for %s: %w", ep.Host, err)
	}
	return &s3Side{
		client:     client,
		endpoint:   ep,
		loc:        loc,
		noCheck:    strings.EqualFold(side.Options[OptS3NoCheckBucket], "true"),
		allowEmpty: cfg.SyncAllowEmpty,
		partSize:   cfg.PartSize,
		numThreads: cfg.Concurrency,
	}, nil
}

// describeS3Error adds the S3 error code to err, so that a bad credential
// reads as such.
func describeS3Error(err error) error {
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidSecurity", "ExpiredToken":
		return fmt.Errorf("S3 refused the credentials (%s): %w", resp.Code, err)
	case "NoSuchBucket":
		return fmt.Errorf("bucket %s does not exist: %w", resp.BucketName, err)
	}
	return err
}

// errEmptySyncSource is returned by a sync whose source holds no file.
var errEmptySyncSource = errors.New("the source holds no file; refusing to sync, which would delete everything on the destination (a typo in the key or path?); set --sync-allow-empty to sync from an empty source")

// checkSyncSource refuses a sync from an empty source unless allowed; what
// names the source in the error.
func checkSyncSource(sync, allowEmpty bool, files int, what string) error {
	if sync && !allowEmpty && files == 0 {
		return fmt.Errorf("sync from %s: %w", what, errEmptySyncSource)
	}
	return nil
}
