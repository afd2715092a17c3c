package workflow

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
// and the failure strategy allow. Each reconcile follows the runs of the
// nodes (followNodes), starts the nodes now ready (startNodes) and decides
// the run from the nodes' phases (decideDAG); once no node is left to run
// and none failed, the DAG's results are worked out (dagResults).
func (r *Reconciler) runDAG(ctx context.Context, run *batchv1beta1.WorkflowRun, spec *batchv1beta1.WorkflowTemplateSpec, b *binding) (outcome, error) {
	dag := spec.DAG
	if errs := validateGraph(dag, nil); len(errs) > 0 {
		return errorOutcome("the DAG is invalid: %v", errs.ToAggregate()), nil
	}
	if run.Status.Nodes == nil {
		run.Status.Nodes = map[string]batchv1beta1.NodeStatus{}
	}
	if err := r.followNodes(ctx, run, dag); err != nil {
		return outcome{}, err
	}
	stopAll := stopAllFailed(dag, tallyNodes(dag, run.Status.Nodes).bad)
	results := map[string]map[string]string{}
	if err := r.nodeResults(ctx, run, results); err != nil {
		return outcome{}, err
	}
	sub := b.dagVariables(results).budget(MaxSubstitutedObjectBytes)
	if err := r.startNodes(ctx, run, dag, b, sub, stopAll); err != nil {
		return outcome{}, err
	}
	if o, decided := decideDAG(dag, run.Status.Nodes); decided {
		return o, nil
	}
	return r.dagResults(ctx, run, spec, b, results)
}

// nodeTally counts the nodes of a DAG by where they stand.
type nodeTally struct {
	// bad names the nodes that failed or erred, in template order.
	bad []string
	// active counts the nodes whose runs have not ended.
	active int
	// unfinished counts the nodes neither started nor ended.
	unfinished int
}

// tallyNodes counts the DAG's nodes, whose statuses are nodes, by where
// they stand.
func tallyNodes(dag *batchv1beta1.DAGWorkflowTemplate, nodes map[string]batchv1beta1.NodeStatus) nodeTally {
	var t nodeTally
	for _, n := range dag.Templates {
		ns := nodes[n.Name]
		switch {
		case ns.Phase == batchv1beta1.NodeFailed || ns.Phase == batchv1beta1.NodeError:
			t.bad = append(t.bad, n.Name)
		case ns.WorkflowRunName != "" && !ns.Phase.Done():
			t.active++
		case !ns.Phase.Done():
			t.unfinished++
		}
	}
	return t
}

// decideDAG decides the run from its nodes' statuses, nodes: it runs while
// a node's run has not ended, or nodes are still to start and none failed
// or the failure strategy lets the others go on; it fails once a node
// failed and no other is left to start, or the failure strategy stops
// them all (failDAG). It reports false when every node succeeded or was
// skipped: the run succeeds with its results.
func decideDAG(dag *batchv1beta1.DAGWorkflowTemplate, nodes map[string]batchv1beta1.NodeStatus) (outcome, bool) {
	t := tallyNodes(dag, nodes)
	switch {
	case t.active > 0:
		return running(fmt.Sprintf("%d nodes running", t.active)), true
	case t.unfinished > 0 && len(t.bad) == 0:
		return running("starting nodes"), true
	case len(t.bad) > 0 && (t.unfinished == 0 || stopAllFailed(dag, t.bad)):
		return failDAG(dag, nodes, t.bad), true
	case len(t.bad) > 0:
		return running("starting nodes"), true
	}
	return outcome{}, false
}

// failDAG is the outcome of a DAG whose nodes bad failed: the nodes that
// have not ended are marked skipped, and the run fails naming bad.
func failDAG(dag *batchv1beta1.DAGWorkflowTemplate, nodes map[string]batchv1beta1.NodeStatus, bad []string) outcome {
	for _, n := range dag.Templates {
		if ns := nodes[n.Name]; !ns.Phase.Done() {
			ns.Phase, ns.Message = batchv1beta1.NodeSkipped, "not started: the DAG failed"
			nodes[n.Name] = ns
		}
	}
	sort.Strings(bad)
	return outcome{phase: batchv1beta1.NodeFailed, message: "nodes failed: " + strings.Join(bad, ", ")}
}

// dagResults is the outcome of a DAG whose nodes all succeeded or were
// skipped: it succeeds with spec's results, substituted from the DAG's
// params and its nodes' results (results, completed with those of nodes
// that succeeded since it was filled). A result that cannot be substituted
// fails the run.
func (r *Reconciler) dagResults(ctx context.Context, run *batchv1beta1.WorkflowRun, spec *batchv1beta1.WorkflowTemplateSpec, b *binding, results map[string]map[string]string) (outcome, error) {
	if err := r.nodeResults(ctx, run, results); err != nil {
		return outcome{}, err
	}
	sub := b.dagVariables(results).budget(MaxSubstitutedObjectBytes)
	st := &run.Status
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
