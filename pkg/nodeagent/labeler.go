package nodeagent

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
)

// FieldManager is the server-side apply field manager of the agent's
// node labels.
const FieldManager = "accelstack-node-agent"

// NodeLabeler applies the agent's labels to one Node with server-side
// apply under FieldManager. Keys it applied before and omits now are
// removed by the API server; labels of other managers are untouched.
type NodeLabeler struct {
	client kubernetes.Interface
	node   string
}

var _ LabelApplier = (*NodeLabeler)(nil)

// NewNodeLabeler returns a labeler for the named node.
func NewNodeLabeler(client kubernetes.Interface, node string) *NodeLabeler {
	return &NodeLabeler{client: client, node: node}
}

// Apply makes labels the agent's set of labels on the node. It refuses to
// create a missing Node (apply would). Conflicts with another manager's
// value for one of the agent's keys are taken over (force), as the agent
// is the authority for these keys.
func (l *NodeLabeler) Apply(ctx context.Context, labels map[string]string) error {
	if _, err := l.client.CoreV1().Nodes().Get(ctx, l.node, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("node %s does not exist: check --node-name: %w", l.node, err)
		}
		return fmt.Errorf("reading node %s: %w", l.node, err)
	}
	ac := corev1ac.Node(l.node)
	if len(labels) > 0 {
		ac.WithLabels(labels)
	}
	_, err := l.client.CoreV1().Nodes().Apply(ctx, ac, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("applying labels to node %s: %w", l.node, err)
	}
	return nil
}
