package cluster

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelstack/accelstack/test/harness"
)

// S3Endpoint is the in-cluster S3 endpoint of test/cluster/manifests/s3.yaml,
// reachable from the host and from pods.
const S3Endpoint = "http://" + GatewayIP + ":7480"

// S3 describes the in-cluster S3 endpoint, with the root credentials read
// from its Secret.
func (c *Cluster) S3(ctx context.Context) (*harness.S3Server, error) {
	cs, err := c.Client()
	if err != nil {
		return nil, err
	}
	sec, err := cs.CoreV1().Secrets(Namespace).Get(ctx, "s3-endpoint-root", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the S3 endpoint's credentials: %w", err)
	}
	return &harness.S3Server{
		Endpoint:  S3Endpoint,
		AccessKey: string(sec.Data["access-key"]),
		SecretKey: string(sec.Data["secret-key"]),
		Region:    "us-east-1",
	}, nil
}
