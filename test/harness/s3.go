package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VersityGWVersion is the versitygw release the harness runs (make tools installs it).
const VersityGWVersion = "v1.8.0"

// S3Server is an S3 endpoint started for a test.
type S3Server struct {
	// Endpoint is the server's URL, e.g. http://127.0.0.1:7070.
	Endpoint string
	// AccessKey and SecretKey are the root credentials.
	AccessKey, SecretKey string
	// Region is the region the server answers for.
	Region string
	// Dir is the posix backend's directory; empty for the in-process fake.
	Dir string
}

// Client returns an S3 client with the root credentials.
func (s *S3Server) Client() (*minio.Client, error) {
	u, err := url.Parse(s.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("parsing endpoint %q: %w", s.Endpoint, err)
	}
	return minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Secure:       u.Scheme == "https",
		Region:       s.Region,
		BucketLookup: minio.BucketLookupPath,
	})
}

// S3cfg is the server's root credentials in s3cmd's .s3cfg format, the
// layout StorageShim and csi-s3 Secrets hold.
func (s *S3Server) S3cfg() string {
	host, https := strings.CutPrefix(s.Endpoint, "https://")
	if !https {
		host = strings.TrimPrefix(s.Endpoint, "http://")
	}
	useHTTPS := "False"
	if https {
		useHTTPS = "True"
	}
	return fmt.Sprintf("[default]\naccess_key = %s\nsecret_key = %s\nhost_base = %s\nhost_bucket = %s\nuse_https = %s\nbucket_location = %s\n",
		s.AccessKey, s.SecretKey, host, host, useHTTPS, s.Region)
}

// LaunchS3 starts versitygw with its posix backend on dir, listening on
// 127.0.0.1:port and logging to logPath, and waits until it answers an
// authenticated S3 request. The caller must Stop the process.
func LaunchS3(dir string, port int, logPath string) (*S3Server, *Process, error) {
	bin, err := Tool("versitygw")
	if err != nil {
		return nil, nil, err
	}
	s := &S3Server{
		Endpoint:  "http://127.0.0.1:" + strconv.Itoa(port),
		AccessKey: "accelstack-root",
		SecretKey: "accelstack-root-secret-key",
		Region:    "us-east-1",
		Dir:       filepath.Join(dir, "data"),
	}
	iamDir := filepath.Join(dir, "iam")
	for _, d := range []string{s.Dir, iamDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	p, err := RunProcess("versitygw", bin, []string{
		"--port", "127.0.0.1:" + strconv.Itoa(port),
		"--region", s.Region,
		"--iam-dir", iamDir,
		"posix", s.Dir,
	}, logPath, "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	if err != nil {
		return nil, nil, err
	}
	c, err := s.Client()
	if err != nil {
		return nil, nil, errors.Join(err, p.Stop())
	}
	// Ready means an authenticated S3 call succeeds, not only that the port is open.
	err = p.WaitReady(30*time.Second, func(ctx context.Context) error {
		_, err := c.ListBuckets(ctx)
		return err
	})
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("waiting for versitygw: %w", err), p.Stop())
	}
	return s, p, nil
}

// StartS3 starts a real S3 server, versitygw with its posix backend on a temp
// dir, on a free loopback port, and stops it when the test ends.
func StartS3(t testing.TB) *S3Server {
	t.Helper()
	dir := t.TempDir()
	s, p, err := LaunchS3(dir, freePort(t), filepath.Join(dir, "versitygw.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Logf("stopping versitygw: %v", err)
		}
		if t.Failed() {
			t.Logf("log of versitygw:\n%s", p.Log())
		}
	})
	return s
}

// StartFakeS3 starts an in-process S3 fake (gofakes3 on memory) for fast
// unit tests; it accepts any credentials.
func StartFakeS3(t testing.TB) *S3Server {
	t.Helper()
	faker := gofakes3.New(s3mem.New(), gofakes3.WithTimeSource(gofakes3.DefaultTimeSource()))
	srv := httptest.NewServer(faker.Server())
	t.Cleanup(srv.Close)
	return &S3Server{Endpoint: srv.URL, AccessKey: "fake", SecretKey: "fake-secret", Region: "us-east-1"}
}

// ExampleS3cfg is an s3cmd configuration (.s3cfg) as the platform's
// StorageShim Secrets hold it.
const ExampleS3cfg = `[default]
access_key = AKIAEXAMPLE
secret_key = example-secret-key
host_base = http://127.0.0.1:9000
use_https = False
`

// S3cfgSecret is an S3-cfg Secret as the platform documents it.
func S3cfgSecret(ns, name string, data map[string]string, labels map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, StringData: data}
}
