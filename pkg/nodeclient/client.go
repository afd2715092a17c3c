// Package nodeclient is the small core/v1 client of the node binaries: the
// nodes, pods and ConfigMaps the Ascend device plugin reads and writes in
// Volcano mode and for its node state, and the node labels that both the
// device plugin and the node agent write (through pkg/nodeclient/nodelabel,
// which the node agent uses alone).
//
// It exists because client-go's typed clients link
// k8s.io/client-go/kubernetes/scheme, which registers every API group, and
// the node binaries run on every node. Its REST client's scheme registers
// core/v1 only. Replacing the clientset and its informer factory with it
// and a pod informer of their own took the device plugin's binary from 84
// to 36 MiB and its resident memory from 60 to 29.6 MiB (simulated
// MIG-mixed machine). The node agent's labels moving off the typed
// clientset took its binary from 75 to 60 MB, and Volcano mode, with the
// clientset it still used, moving out of the package the agent imports
// took it from 59.8 to 31.9 MB.
package nodeclient

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/accelstack/accelstack/pkg/nodeclient/nodelabel"
)

var (
	scheme         = runtime.NewScheme()
	parameterCodec = runtime.NewParameterCodec(scheme)
)

func init() {
	metav1.AddToGroupVersion(scheme, corev1.SchemeGroupVersion)
	if err := corev1.AddToScheme(scheme); err != nil {
		panic(err)
	}
}

// Client reads and writes the nodes, pods and ConfigMaps of one cluster.
// Its node-label methods are nodelabel.Client's.
type Client struct {
	*nodelabel.Client
	rc rest.Interface
}

// Load connects with a kubeconfig file, or in-cluster when kubeconfig is
// "", sending userAgent.
func Load(kubeconfig, userAgent string) (*Client, error) {
	cfg, err := nodelabel.RESTConfig(kubeconfig, userAgent)
	if err != nil {
		return nil, err
	}
	return New(cfg)
}

// New connects with cfg, which it does not modify.
func New(cfg *rest.Config) (*Client, error) {
	labels, err := nodelabel.New(cfg)
	if err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("creating cluster client: %w", err)
	}
	return &Client{Client: labels, rc: rc}, nil
}

// GetNode reads a node.
func (c *Client) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	n := &corev1.Node{}
	return n, c.rc.Get().Resource("nodes").Name(name).Do(ctx).Into(n)
}

// ListPods lists the pods of every namespace.
func (c *Client) ListPods(ctx context.Context, opts metav1.ListOptions) (*corev1.PodList, error) {
	l := &corev1.PodList{}
	return l, c.rc.Get().Resource("pods").VersionedParams(&opts, parameterCodec).Do(ctx).Into(l)
}

// WatchPods watches the pods of every namespace.
func (c *Client) WatchPods(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.rc.Get().Resource("pods").VersionedParams(&opts, parameterCodec).Watch(ctx)
}

// PatchPod patches a pod.
func (c *Client) PatchPod(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) error {
	return c.rc.Patch(pt).Namespace(namespace).Resource("pods").Name(name).Body(data).Do(ctx).Error()
}

// GetConfigMap reads a ConfigMap.
func (c *Client) GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	return cm, c.rc.Get().Namespace(namespace).Resource("configmaps").Name(name).Do(ctx).Into(cm)
}

// CreateConfigMap creates a ConfigMap.
func (c *Client) CreateConfigMap(ctx context.Context, cm *corev1.ConfigMap) error {
	return c.rc.Post().Namespace(cm.Namespace).Resource("configmaps").Body(cm).Do(ctx).Error()
}

// UpdateConfigMap replaces a ConfigMap.
func (c *Client) UpdateConfigMap(ctx context.Context, cm *corev1.ConfigMap) error {
	return c.rc.Put().Namespace(cm.Namespace).Resource("configmaps").Name(cm.Name).Body(cm).Do(ctx).Error()
}
