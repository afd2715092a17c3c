package workflow

import (
	"context"
	"fmt"
	"path"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// startNodes starts the DAG's nodes whose dependencies have ended
// (startNode), with the DAG's variables sub; while stopAll, after a
// failure the failure strategy does not let the others outlive, it starts
// none, but still skips those that depend on a failed node.
func (r *Reconciler) startNodes(ctx context.Context, run *batchv1beta1.WorkflowRun, dag *batchv1beta1.DAGWorkflowTemplate, b *binding, sub *substituter, stopAll bool) error {
	for i, n := range dag.Templates {
		if err := r.startNode(ctx, run, i, &n, b, sub, stopAll); err != nil {
			return err
		}
	}
	return nil
}

// startNode decides node n, the i-th of the DAG, if it has not started: it
// is skipped, with an event, when a node it depends on failed or did not
// run (blockedBy); it waits while a node it depends on has not ended, or
// while stopAll; it is skipped, with an event, when its when expressions
// are false; else its run is created (createNodeRun). A node whose when
// expressions cannot be substituted errs.
func (r *Reconciler) startNode(ctx context.Context, run *batchv1beta1.WorkflowRun, i int, n *batchv1beta1.DAGNode, b *binding, sub *substituter, stopAll bool) error {
	st := &run.Status
	ns := st.Nodes[n.Name]
	if ns.Phase != "" || ns.WorkflowRunName != "" {
		return nil
	}
	ready, blocked := dependenciesEnded(n, st.Nodes)
	if blocked != "" {
		ns.Phase, ns.Message = batchv1beta1.NodeSkipped, notRunPrefix+blocked+" failed or did not run"
		st.Nodes[n.Name] = ns
		r.recorder.Eventf(run, nil, corev1.EventTypeNormal, EventNodeSkipped, "Skip", "Node %s skipped: %s", n.Name, ns.Message)
		return nil
	}
	if !ready || stopAll {
		return nil
	}
	when, ok, err := evalWhen(n.When, sub, fmt.Sprintf("spec.dag.templates[%d].when", i))
	if err != nil {
		ns.Phase, ns.Message = batchv1beta1.NodeError, err.Error()
		st.Nodes[n.Name] = ns
		return nil //nolint:nilerr // the error is the node's status
	}
	if !ok {
		ns.Phase, ns.WhenExpressions, ns.Message = batchv1beta1.NodeSkipped, when, "when expressions are false"
		st.Nodes[n.Name] = ns
		r.recorder.Eventf(run, nil, corev1.EventTypeNormal, EventNodeSkipped, "Skip", "Node %s skipped: its when expressions are false", n.Name)
		return nil
	}
	return r.createNodeRun(ctx, run, i, n, b, sub)
}

// dependenciesEnded looks at the nodes n depends on, whose statuses are in
// nodes: ready reports whether all succeeded or were skipped, and blocked
// names the last of them whose dependents must not run (blockedBy), if any.
func dependenciesEnded(n *batchv1beta1.DAGNode, nodes map[string]batchv1beta1.NodeStatus) (ready bool, blocked string) {
	ready = true
	for _, d := range Dependencies(n) {
		switch dp := nodes[d].Phase; {
		case blockedBy(nodes[d]):
			blocked = d
		case dp == batchv1beta1.NodeSucceeded || dp == batchv1beta1.NodeSkipped:
		default:
			ready = false
		}
	}
	return ready, blocked
}

// createNodeRun creates the run of node n, the i-th of the DAG (childRun),
// and marks the node Pending, with an event. A run that cannot be made
// (params too long, nesting too deep) or that the API server refuses makes
// the node err; any other failure to create it is the reconcile's error.
func (r *Reconciler) createNodeRun(ctx context.Context, run *batchv1beta1.WorkflowRun, i int, n *batchv1beta1.DAGNode, b *binding, sub *substituter) error {
	st := &run.Status
	ns := st.Nodes[n.Name]
	child, err := r.childRun(run, n, b, sub, fmt.Sprintf("spec.dag.templates[%d].params", i))
	if err != nil {
		ns.Phase, ns.Message = batchv1beta1.NodeError, err.Error()
		st.Nodes[n.Name] = ns
		return nil //nolint:nilerr // the error is the node's status
	}
	if err := r.client.Create(ctx, child); err != nil && !apierrors.IsAlreadyExists(err) {
		if !isRefusal(err) {
			return fmt.Errorf("creating run %s of node %s: %w", child.Name, n.Name, err)
		}
		ns.Phase, ns.Message = batchv1beta1.NodeError, fmt.Sprintf("creating run %s: %v", child.Name, err)
		st.Nodes[n.Name] = ns
		return nil
	}
	ns.WorkflowRunName, ns.Phase = child.Name, batchv1beta1.NodePending
	st.Nodes[n.Name] = ns
	r.recorder.Eventf(run, nil, corev1.EventTypeNormal, EventNodeStarted, "Start", "Node %s runs as %s", n.Name, child.Name)
	return nil
}

// evalWhen evaluates when expressions, at field, with sub's variables
// substituted; an empty input is "". It returns the substituted expressions
// and whether all hold, or a *TooLongError.
func evalWhen(when []batchv1beta1.WhenExpression, sub *substituter, field string) ([]batchv1beta1.WhenExpression, bool, error) {
	out := make([]batchv1beta1.WhenExpression, 0, len(when))
	ok := true
	for i, w := range when {
		f := fmt.Sprintf("%s[%d]", field, i)
		input, err := sub.replace(w.Input, f+".input", MaxSubstitutedBytes)
		if err != nil {
			return nil, false, err
		}
		e := batchv1beta1.WhenExpression{Input: unresolvedEmpty(input), Operator: w.Operator}
		in := false
		for j, v := range w.Values {
			if v, err = sub.replace(v, fmt.Sprintf("%s.values[%d]", f, j), MaxSubstitutedBytes); err != nil {
				return nil, false, err
			}
			v = unresolvedEmpty(v)
			e.Values = append(e.Values, v)
			in = in || v == e.Input
		}
		if in != (w.Operator != batchv1beta1.WhenNotIn) {
			ok = false
		}
		out = append(out, e)
	}
	return out, ok, nil
}

// unresolvedEmpty turns a reference to a result no node produced (a node
// skipped, a result not written) into "".
func unresolvedEmpty(s string) string {
	return variableRE.ReplaceAllStringFunc(s, func(ref string) string {
		if _, _, ok := ResultReference(ref[2 : len(ref)-1]); ok {
			return ""
		}
		return ref
	})
}

// childRun returns the run of a DAG node: its template, its params (at
// field) with the DAG's variables substituted, each at most
// batchv1beta1.MaxParamValueLength bytes, its workspaces bound to the DAG's,
// nested one level deeper.
func (r *Reconciler) childRun(run *batchv1beta1.WorkflowRun, n *batchv1beta1.DAGNode, b *binding, sub *substituter, field string) (*batchv1beta1.WorkflowRun, error) {
	depth := run.Spec.Depth + 1
	if depth > batchv1beta1.MaxWorkflowRunDepth {
		return nil, fmt.Errorf("runs nest at most %d deep: node %s would be at depth %d", batchv1beta1.MaxWorkflowRunDepth, n.Name, depth)
	}
	ns := run.Status.Nodes[n.Name]
	name := childName(run.Name+"-"+n.Name, suffix(string(run.UID), n.Name, strconv.Itoa(int(ns.Retries)), strconv.Itoa(len(run.Status.RetriedStatus))))
	child := &batchv1beta1.WorkflowRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: run.Namespace,
			Name:      name,
			Labels: map[string]string{
				batchv1beta1.WorkflowRunLabel:      labelValue(run.Name),
				batchv1beta1.WorkflowRunNodeLabel:  n.Name,
				batchv1beta1.WorkflowTemplateLabel: labelValue(n.WorkflowTemplateRef),
			},
			Annotations: queue.CarryGrant(nil, run, run.Spec.Scheduler.QueueName()),
		},
		Spec: batchv1beta1.WorkflowRunSpec{
			WorkflowTemplateRef: n.WorkflowTemplateRef,
			ServiceAccountName:  run.Spec.ServiceAccountName,
			Depth:               depth,
			Scheduler:           run.Spec.Scheduler.DeepCopy(),
		},
	}
	for i, p := range n.Params {
		v, err := sub.replace(p.Value, fmt.Sprintf("%s[%d].value", field, i), batchv1beta1.MaxParamValueLength)
		if err != nil {
			return nil, err
		}
		child.Spec.Params = append(child.Spec.Params, batchv1beta1.Param{Name: p.Name, Value: unresolvedEmpty(v)})
	}
	bound := map[string]boundWorkspace{}
	for _, w := range b.workspaces {
		bound[w.decl.Name] = w
	}
	for _, w := range n.Workspaces {
		parent, ok := bound[w.Workspace]
		if !ok {
			continue
		}
		cb := *parent.binding.DeepCopy()
		cb.Name = w.Name
		if w.SubPath != "" {
			cb.SubPath = path.Join(cb.SubPath, w.SubPath)
		}
		child.Spec.Workspaces = append(child.Spec.Workspaces, cb)
	}
	if err := controllerutil.SetControllerReference(run, child, r.scheme); err != nil {
		return nil, err
	}
	return child, nil
}
