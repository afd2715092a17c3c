// Package kube is the slice of the core/v1 API the Ascend device plugin
// uses in Volcano mode and for its node state: nodes, pods and ConfigMaps.
// It speaks through a REST client whose scheme registers core/v1 only;
// client-go's typed clients link k8s.io/client-go/kubernetes/scheme, which
// registers every API group and adds some 25 MiB to the plugin's binary.
package kube

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
	"k8s.io/client-go/tools/clientcmd"
)

// UserAgent is how the plugin shows in the API server's logs and metrics.
const UserAgent = "accelstack-ascend-device-plugin"

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
type Client struct {
	rc rest.Interface
}

// Load connects with a kubeconfig file, or in-cluster when kubeconfig is "".
func Load(kubeconfig string) (*Client, error) {
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
	return New(cfg)
}

// New connects with cfg, which it does not modify.
func New(cfg *rest.Config) (*Client, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = UserAgent
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("creating cluster client: %w", err)
	}
	return &Client{rc: rc}, nil
}

// GetNode reads a node.
func (c *Client) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	n := &corev1.Node{}
	return n, c.rc.Get().Resource("nodes").Name(name).Do(ctx).Into(n)
}

// PatchNode patches a node.
func (c *Client) PatchNode(ctx context.Context, name string, pt types.PatchType, data []byte) error {
	return c.rc.Patch(pt).Resource("nodes").Name(name).Body(data).Do(ctx).Error()
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
