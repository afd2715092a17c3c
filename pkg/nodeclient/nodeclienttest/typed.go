// Package nodeclienttest serves the nodeclient.Client methods from a
// client-go typed client, so unit tests can run Volcano mode and node
// state against client-go's fake clientset.
package nodeclienttest

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/accelstack/accelstack/pkg/nodeclient/nodelabel"
)

// Typed adapts a core/v1 typed client to the methods of nodeclient.Client.
type Typed struct {
	C corev1client.CoreV1Interface
}

// IsWatchListSemanticsUnSupported tells informers that client-go's fake
// cannot stream lists (no bookmark ends the initial events).
func (Typed) IsWatchListSemanticsUnSupported() bool { return true }

// GetNode reads a node.
func (t Typed) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	return t.C.Nodes().Get(ctx, name, metav1.GetOptions{})
}

// MergeNodeLabels sets labels on a node with a JSON merge patch.
func (t Typed) MergeNodeLabels(ctx context.Context, name string, labels map[string]string) error {
	patch, err := nodelabel.MergePatch(labels)
	if err != nil {
		return err
	}
	_, err = t.C.Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// ListPods lists the pods of every namespace.
func (t Typed) ListPods(ctx context.Context, opts metav1.ListOptions) (*corev1.PodList, error) {
	return t.C.Pods(metav1.NamespaceAll).List(ctx, opts)
}

// WatchPods watches the pods of every namespace.
func (t Typed) WatchPods(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return t.C.Pods(metav1.NamespaceAll).Watch(ctx, opts)
}

// PatchPod patches a pod.
func (t Typed) PatchPod(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) error {
	_, err := t.C.Pods(namespace).Patch(ctx, name, pt, data, metav1.PatchOptions{})
	return err
}

// GetConfigMap reads a ConfigMap.
func (t Typed) GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	return t.C.ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
}

// CreateConfigMap creates a ConfigMap.
func (t Typed) CreateConfigMap(ctx context.Context, cm *corev1.ConfigMap) error {
	_, err := t.C.ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	return err
}

// UpdateConfigMap replaces a ConfigMap.
func (t Typed) UpdateConfigMap(ctx context.Context, cm *corev1.ConfigMap) error {
	_, err := t.C.ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	return err
}
