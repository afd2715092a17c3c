package workflow

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// followNodes brings the statuses of the DAG's nodes whose runs had not
// ended up to date with those runs (followNode).
func (r *Reconciler) followNodes(ctx context.Context, run *batchv1beta1.WorkflowRun, dag *batchv1beta1.DAGWorkflowTemplate) error {
	for i := range dag.Templates {
		if err := r.followNode(ctx, run, &dag.Templates[i]); err != nil {
			return err
		}
	}
	return nil
}

// followNode brings the status of node n up to date with its run, if it has
// one that had not ended: a run deleted fails the node; a run that has not
// ended leaves it Running once the run has a phase; a run that failed or
// erred is retried while n has retries left (retryNode); any other ended
// run gives the node its phase and message.
func (r *Reconciler) followNode(ctx context.Context, run *batchv1beta1.WorkflowRun, n *batchv1beta1.DAGNode) error {
	st := &run.Status
	ns, ok := st.Nodes[n.Name]
	if !ok || ns.Phase.Done() || ns.WorkflowRunName == "" {
		return nil
	}
	child, deleted, err := r.getNodeRun(ctx, run.Namespace, ns.WorkflowRunName)
	if err != nil {
		return err
	}
	if child == nil {
		if deleted {
			ns.Phase, ns.Message = batchv1beta1.NodeFailed, "run "+ns.WorkflowRunName+" was deleted"
			st.Nodes[n.Name] = ns
		}
		return nil
	}
	phase := child.Status.Phase
	if !phase.Done() {
		if phase != "" {
			ns.Phase = batchv1beta1.NodeRunning
		}
		st.Nodes[n.Name] = ns
		return nil
	}
	if (phase == batchv1beta1.NodeFailed || phase == batchv1beta1.NodeError) && ns.Retries < n.Retries {
		r.retryNode(run, n, ns, child)
		return nil
	}
	ns.Phase, ns.Message = phase, child.Status.Message
	st.Nodes[n.Name] = ns
	return nil
}

// getNodeRun reads the run name of a node in namespace from the cache.
// The cache may lag behind a run just created, so one it does not hold is
// looked up on the API server: deleted reports that it is not there either.
// A nil run and no error mean there is nothing to follow this time.
func (r *Reconciler) getNodeRun(ctx context.Context, namespace, name string) (child *batchv1beta1.WorkflowRun, deleted bool, err error) {
	child = &batchv1beta1.WorkflowRun{}
	err = r.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, child)
	switch {
	case apierrors.IsNotFound(err):
		// The cache may lag behind a child just created.
		apiErr := r.api.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, child)
		return nil, apierrors.IsNotFound(apiErr), nil
	case err != nil:
		return nil, false, fmt.Errorf("getting run %s: %w", name, err)
	}
	return child, false, nil
}

// retryNode starts node n, with status ns, over after its run child failed
// or erred: the run joins the run's retried statuses, the node counts one
// more retry, with an event, and is left unstarted for startNodes to run
// again.
func (r *Reconciler) retryNode(run *batchv1beta1.WorkflowRun, n *batchv1beta1.DAGNode, ns batchv1beta1.NodeStatus, child *batchv1beta1.WorkflowRun) {
	st := &run.Status
	phase := child.Status.Phase
	st.RetriedStatus = appendRetried(st.RetriedStatus, batchv1beta1.RetriedStatus{
		Node: n.Name, WorkflowRunName: child.Name, Phase: phase, Message: child.Status.Message,
		StartTime: child.Status.StartTime, CompletionTime: child.Status.CompletionTime,
	})
	ns.Retries++
	r.recorder.Eventf(run, nil, corev1.EventTypeWarning, EventNodeRetrying, "Retry",
		"Node %s %s (%s); retry %d of %d", n.Name, strings.ToLower(string(phase)), child.Status.Message, ns.Retries, n.Retries)
	ns.Phase, ns.WorkflowRunName, ns.Message = "", "", ""
	st.Nodes[n.Name] = ns
}
