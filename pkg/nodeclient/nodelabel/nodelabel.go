// Package nodelabel is the part of pkg/nodeclient that writes a node's
// labels, and connects to the API server for both. It speaks to the
// core/v1 REST path with no API types: its scheme holds only meta/v1's
// Status, and the bodies it sends are JSON it builds. The node agent needs
// nothing of the API but its node's labels, so it links this package
// alone; pkg/nodeclient's core/v1 types (k8s.io/api/core/v1) would add
// about 5 MiB to its binary.
package nodelabel

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// coreV1 is the core API's group and version, served under /api.
var coreV1 = schema.GroupVersion{Version: "v1"}

// statusScheme decodes the API server's Status answers, nothing else.
var statusScheme = runtime.NewScheme()

func init() {
	metav1.AddToGroupVersion(statusScheme, coreV1)
}

// RESTConfig returns how to reach the API server: from the kubeconfig file
// at path, or in-cluster when kubeconfig is empty, sending userAgent.
// pkg/nodeclient connects with it too.
func RESTConfig(kubeconfig, userAgent string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("loading cluster configuration: %w", err)
	}
	cfg.UserAgent = userAgent
	return cfg, nil
}

// Client writes node labels. Its errors from the API server are
// k8s.io/apimachinery/pkg/api/errors values (apierrors.IsNotFound and the
// like apply).
type Client struct {
	rc rest.Interface
}

// New connects with cfg, which it does not modify.
func New(cfg *rest.Config) (*Client, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &coreV1
	c.APIPath = "/api"
	c.NegotiatedSerializer = serializer.NewCodecFactory(statusScheme).WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("creating cluster client: %w", err)
	}
	return &Client{rc: rc}, nil
}

// ApplyNodeLabels makes labels the set of labels fieldManager owns on the
// node, with server-side apply: keys it applied before and omits now are
// removed by the API server, labels of other managers are untouched, and
// another manager's value for one of its keys is taken over (force), as
// the caller is the authority for its keys. It refuses to create a missing
// node, as apply alone would.
func (c *Client) ApplyNodeLabels(ctx context.Context, node, fieldManager string, labels map[string]string) error {
	if err := c.rc.Get().Resource("nodes").Name(node).Do(ctx).Error(); err != nil {
		return fmt.Errorf("reading node %s: %w", node, err)
	}
	meta := map[string]any{"name": node}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	body, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": meta})
	if err != nil {
		return fmt.Errorf("encoding node labels: %w", err)
	}
	err = c.rc.Patch(types.ApplyPatchType).Resource("nodes").Name(node).
		Param("fieldManager", fieldManager).Param("force", "true").Body(body).Do(ctx).Error()
	if err != nil {
		return fmt.Errorf("applying labels to node %s: %w", node, err)
	}
	return nil
}

// MergeNodeLabels sets labels on the node with a JSON merge patch, leaving
// its other labels as they are.
func (c *Client) MergeNodeLabels(ctx context.Context, node string, labels map[string]string) error {
	patch, err := MergePatch(labels)
	if err != nil {
		return err
	}
	if err := c.rc.Patch(types.MergePatchType).Resource("nodes").Name(node).Body(patch).Do(ctx).Error(); err != nil {
		return fmt.Errorf("labelling node %s: %w", node, err)
	}
	return nil
}

// MergePatch returns the JSON merge patch that sets labels on an object.
func MergePatch(labels map[string]string) ([]byte, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return nil, fmt.Errorf("encoding label patch: %w", err)
	}
	return patch, nil
}
