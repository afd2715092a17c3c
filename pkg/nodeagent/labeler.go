package nodeagent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
)

// FieldManager is the server-side apply field manager of the agent's
// node labels.
const FieldManager = "accelstack-node-agent"

// NodeLabeler applies the agent's labels to one Node with server-side
// apply under FieldManager. Keys it applied before and omits now are
// removed by the API server; labels of other managers are untouched.
//
// It speaks to the API server over plain HTTP (rest.HTTPClientFor): the
// typed clients link k8s.io/client-go/kubernetes/scheme, which registers
// every API group and made up about 37 MB of the agent's binary, all of
// it resident.
type NodeLabeler struct {
	client *http.Client
	host   string
	node   string
}

var _ LabelApplier = (*NodeLabeler)(nil)

// NewNodeLabeler returns a labeler for the named node through cfg.
func NewNodeLabeler(cfg *rest.Config, node string) (*NodeLabeler, error) {
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the API server client: %w", err)
	}
	host := strings.TrimSuffix(cfg.Host, "/")
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	return &NodeLabeler{client: c, host: host + strings.TrimSuffix(cfg.APIPath, "/"), node: node}, nil
}

// Apply makes labels the agent's set of labels on the node. It refuses to
// create a missing Node (apply would). Conflicts with another manager's
// value for one of the agent's keys are taken over (force), as the agent
// is the authority for these keys.
func (l *NodeLabeler) Apply(ctx context.Context, labels map[string]string) error {
	path := "/api/v1/nodes/" + url.PathEscape(l.node)
	if code, err := l.do(ctx, http.MethodGet, path, "", nil); err != nil {
		if code == http.StatusNotFound {
			return fmt.Errorf("node %s does not exist: check --node-name: %w", l.node, err)
		}
		return fmt.Errorf("reading node %s: %w", l.node, err)
	}
	meta := map[string]any{"name": l.node}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	body, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": meta})
	if err != nil {
		return err
	}
	q := url.Values{"fieldManager": {FieldManager}, "force": {"true"}}
	if _, err := l.do(ctx, http.MethodPatch, path+"?"+q.Encode(), "application/apply-patch+yaml", body); err != nil {
		return fmt.Errorf("applying labels to node %s: %w", l.node, err)
	}
	return nil
}

// do sends one request and returns the status code; a status other than
// 2xx is an error carrying the API server's message.
func (l *NodeLabeler) do(ctx context.Context, method, path, contentType string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, l.host+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return resp.StatusCode, nil
	}
	var st struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(msg, &st) == nil && st.Message != "" {
		return resp.StatusCode, fmt.Errorf("%s (HTTP %d)", st.Message, resp.StatusCode)
	}
	return resp.StatusCode, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
}
