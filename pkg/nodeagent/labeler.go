package nodeagent

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/accelstack/accelstack/pkg/nodeclient/nodelabel"
)

// FieldManager is the server-side apply field manager of the agent's
// node labels.
const FieldManager = "accelstack-node-agent"

// NodeLabeler applies the agent's labels to one Node with server-side
// apply under FieldManager. Keys it applied before and omits now are
// removed by the API server; labels of other managers are untouched.
//
// It writes through pkg/nodeclient/nodelabel, which links no API types:
// the typed clients link k8s.io/client-go/kubernetes/scheme, which
// registers every API group and made up about 37 MB of the agent's
// binary, all of it resident.
type NodeLabeler struct {
	client *nodelabel.Client
	node   string
}

var _ LabelApplier = (*NodeLabeler)(nil)

// NewNodeLabeler returns a labeler for the named node through cfg.
func NewNodeLabeler(cfg *rest.Config, node string) (*NodeLabeler, error) {
	c, err := nodelabel.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the API server client: %w", err)
	}
	return &NodeLabeler{client: c, node: node}, nil
}

// Apply makes labels the agent's set of labels on the node. It refuses to
// create a missing Node (apply would). Conflicts with another manager's
// value for one of the agent's keys are taken over (force), as the agent
// is the authority for these keys.
func (l *NodeLabeler) Apply(ctx context.Context, labels map[string]string) error {
	err := l.client.ApplyNodeLabels(ctx, l.node, FieldManager, labels)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("node %s does not exist: check --node-name: %w", l.node, err)
	}
	return err
}
