package workflow

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// Dependencies returns the nodes node waits for: its dependencies and the
// nodes whose results its params and when expressions use.
func Dependencies(node *batchv1beta1.DAGNode) []string {
	seen := map[string]bool{}
	var out []string
	add := func(names ...string) {
		for _, n := range names {
			if !seen[n] && n != node.Name {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	add(node.Dependencies...)
	for _, p := range node.Params {
		add(nodeReferences(p.Value)...)
	}
	for _, w := range node.When {
		add(nodeReferences(w.Input)...)
		for _, v := range w.Values {
			add(nodeReferences(v)...)
		}
	}
	return out
}

// runDAG runs a DAG template: one child run per node, started once the
// nodes it depends on have ended, as their phases, the when expressions
// and the failure strategy allow.
func (r *Reconciler) runDAG(ctx context.Context, run *batchv1beta1.WorkflowRun, spec *batchv1beta1.WorkflowTemplateSpec, b *binding) (outcome, error) {
	dag := spec.DAG
	if errs := validateGraph(dag, nil); len(errs) > 0 {
		return errorOutcome("the DAG is invalid: %v", errs.ToAggregate()), nil
	}
	st := &run.Status
	if st.Nodes == nil {
		st.Nodes = map[string]batchv1beta1.NodeStatus{}
	}
	// Follow the nodes that run.
	for _, n := range dag.Templates {
		ns, ok := st.Nodes[n.Name]
		if !ok || ns.Phase.Done() || ns.WorkflowRunName == "" {
			continue
		}
		child := &batchv1beta1.WorkflowRun{}
		err := r.client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: ns.WorkflowRunName}, child)
		switch {
		case apierrors.IsNotFound(err):
			// The cache may lag behind a child just created.
			if err := r.api.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: ns.WorkflowRunName}, child); apierrors.IsNotFound(err) {
				ns.Phase, ns.Message = batchv1beta1.NodeFailed, "run "+ns.WorkflowRunName+" was deleted"
				st.Nodes[n.Name] = ns
			}
			continue
		case err != nil:
			return outcome{}, fmt.Errorf("getting run %s: %w", ns.WorkflowRunName, err)
		}
		phase := child.Status.Phase
		if !phase.Done() {
			if phase != "" {
				ns.Phase = batchv1beta1.NodeRunning
			}
			st.Nodes[n.Name] = ns
			continue
		}
		if (phase == batchv1beta1.NodeFailed || phase == batchv1beta1.NodeError) && ns.Retries < n.Retries {
			st.RetriedStatus = appendRetried(st.RetriedStatus, batchv1beta1.RetriedStatus{
				Node: n.Name, WorkflowRunName: child.Name, Phase: phase, Message: child.Status.Message,
				StartTime: child.Status.StartTime, CompletionTime: child.Status.CompletionTime,
			})
			ns.Retries++
			r.recorder.Eventf(run, nil, corev1.EventTypeWarning, EventNodeRetrying, "Retry",
				"Node %s %s (%s); retry %d of %d", n.Name, strings.ToLower(string(phase)), child.Status.Message, ns.Retries, n.Retries)
			ns.Phase, ns.WorkflowRunName, ns.Message = "", "", ""
			st.Nodes[n.Name] = ns
			continue
		}
		ns.Phase, ns.Message = phase, child.Status.Message
		st.Nodes[n.Name] = ns
	}

	results := map[string]map[string]string{}
	failed := false
	for _, n := range dag.Templates {
		ns := st.Nodes[n.Name]
		if ns.Phase == batchv1beta1.NodeFailed || ns.Phase == batchv1beta1.NodeError {
			failed = true
		}
	}
	stopAll := failed && dag.FailureStrategy != batchv1beta1.StopDependentWorkflowTemplates
	if err := r.nodeResults(ctx, run, results); err != nil {
		return outcome{}, err
	}
	vars := b.dagVariables(results)
	sub := vars.budget(MaxSubstitutedObjectBytes)

	// Start the nodes whose dependencies have ended.
	for i, n := range dag.Templates {
		ns := st.Nodes[n.Name]
		if ns.Phase != "" || ns.WorkflowRunName != "" {
			continue
		}
		ready, blocked := true, ""
		for _, d := range Dependencies(&n) {
			switch dp := st.Nodes[d].Phase; {
			case blockedBy(st.Nodes[d]):
				blocked = d
			case dp == batchv1beta1.NodeSucceeded || dp == batchv1beta1.NodeSkipped:
			default:
				ready = false
			}
		}
		if blocked != "" {
			ns.Phase, ns.Message = batchv1beta1.NodeSkipped, notRunPrefix+blocked+" failed or did not run"
			st.Nodes[n.Name] = ns
			r.recorder.Eventf(run, nil, corev1.EventTypeNormal, EventNodeSkipped, "Skip", "Node %s skipped: %s", n.Name, ns.Message)
			continue
		}
		if !ready || stopAll {
			continue
		}
		when, ok, err := evalWhen(n.When, sub, fmt.Sprintf("spec.dag.templates[%d].when", i))
		if err != nil {
			ns.Phase, ns.Message = batchv1beta1.NodeError, err.Error()
			st.Nodes[n.Name] = ns
			continue
		}
		if !ok {
			ns.Phase, ns.WhenExpressions, ns.Message = batchv1beta1.NodeSkipped, when, "when expressions are false"
			st.Nodes[n.Name] = ns
			r.recorder.Eventf(run, nil, corev1.EventTypeNormal, EventNodeSkipped, "Skip", "Node %s skipped: its when expressions are false", n.Name)
			continue
		}
		child, err := r.childRun(run, &n, b, sub, fmt.Sprintf("spec.dag.templates[%d].params", i))
		if err != nil {
			ns.Phase, ns.Message = batchv1beta1.NodeError, err.Error()
			st.Nodes[n.Name] = ns
			continue
		}
		if err := r.client.Create(ctx, child); err != nil && !apierrors.IsAlreadyExists(err) {
			if !isRefusal(err) {
				return outcome{}, fmt.Errorf("creating run %s of node %s: %w", child.Name, n.Name, err)
			}
			ns.Phase, ns.Message = batchv1beta1.NodeError, fmt.Sprintf("creating run %s: %v", child.Name, err)
			st.Nodes[n.Name] = ns
			continue
		}
		ns.WorkflowRunName, ns.Phase = child.Name, batchv1beta1.NodePending
		st.Nodes[n.Name] = ns
		r.recorder.Eventf(run, nil, corev1.EventTypeNormal, EventNodeStarted, "Start", "Node %s runs as %s", n.Name, child.Name)
	}

	// Decide the run.
	var unfinished, active int
	var bad []string
	for _, n := range dag.Templates {
		ns := st.Nodes[n.Name]
		switch {
		case ns.Phase == batchv1beta1.NodeFailed || ns.Phase == batchv1beta1.NodeError:
			bad = append(bad, n.Name)
		case ns.WorkflowRunName != "" && !ns.Phase.Done():
			active++
		case !ns.Phase.Done():
			unfinished++
		}
	}
	switch {
	case active > 0:
		return running(fmt.Sprintf("%d nodes running", active)), nil
	case unfinished > 0 && len(bad) == 0:
		return running("starting nodes"), nil
	case len(bad) > 0 && (unfinished == 0 || stopAllFailed(dag, bad)):
		for _, n := range dag.Templates {
			if ns := st.Nodes[n.Name]; !ns.Phase.Done() {
				ns.Phase, ns.Message = batchv1beta1.NodeSkipped, "not started: the DAG failed"
				st.Nodes[n.Name] = ns
			}
		}
		sort.Strings(bad)
		return outcome{phase: batchv1beta1.NodeFailed, message: "nodes failed: " + strings.Join(bad, ", ")}, nil
	case len(bad) > 0:
		return running("starting nodes"), nil
	}
	if err := r.nodeResults(ctx, run, results); err != nil {
		return outcome{}, err
	}
	sub = b.dagVariables(results).budget(MaxSubstitutedObjectBytes)
	st.Results = nil
	for i, res := range spec.Results {
		v, err := sub.replace(res.Value, fmt.Sprintf("spec.results[%d].value", i), MaxSubstitutedBytes)
		if err != nil {
			return outcome{phase: batchv1beta1.NodeFailed, message: err.Error()}, nil //nolint:nilerr // the error is the run's outcome
		}
		st.Results = append(st.Results, batchv1beta1.WorkflowRunResult{Name: res.Name, Value: v})
	}
	return outcome{phase: batchv1beta1.NodeSucceeded, message: "All nodes in DAG have succeeded"}, nil
}

// notRunPrefix starts the message of a node skipped because a node it
// depends on failed, so that its own dependents are skipped too.
const notRunPrefix = "not run: node "

// blockedBy reports whether the dependents of a node with status ns must
// not run: it failed, or was skipped because a node it depends on failed.
func blockedBy(ns batchv1beta1.NodeStatus) bool {
	return ns.Phase == batchv1beta1.NodeFailed || ns.Phase == batchv1beta1.NodeError ||
		ns.Phase == batchv1beta1.NodeSkipped && strings.HasPrefix(ns.Message, notRunPrefix)
}

// stopAllFailed reports whether the DAG starts no more nodes after bad
// failed.
func stopAllFailed(dag *batchv1beta1.DAGWorkflowTemplate, bad []string) bool {
	return len(bad) > 0 && dag.FailureStrategy != batchv1beta1.StopDependentWorkflowTemplates
}

// nodeResults collects the results of the nodes that succeeded, by node.
func (r *Reconciler) nodeResults(ctx context.Context, run *batchv1beta1.WorkflowRun, into map[string]map[string]string) error {
	for name, ns := range run.Status.Nodes {
		if ns.Phase != batchv1beta1.NodeSucceeded || into[name] != nil || ns.WorkflowRunName == "" {
			continue
		}
		child := &batchv1beta1.WorkflowRun{}
		if err := r.client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: ns.WorkflowRunName}, child); err != nil {
			if apierrors.IsNotFound(err) {
				into[name] = map[string]string{}
				continue
			}
			return fmt.Errorf("getting the results of run %s: %w", ns.WorkflowRunName, err)
		}
		m := map[string]string{}
		for _, res := range child.Status.Results {
			m[res.Name] = res.Value
		}
		into[name] = m
	}
	return nil
}

// dagVariables are the variables of a DAG's node params, when expressions
// and results: its params and the results of its nodes (empty for nodes
// that did not succeed).
func (b *binding) dagVariables(results map[string]map[string]string) Variables {
	v := Variables{}
	for k, val := range b.vars {
		if strings.HasPrefix(k, "params.") {
			v[k] = val
		}
	}
	for node, m := range results {
		for name, val := range m {
			v["templates."+node+".results."+name] = val
		}
	}
	return v
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
