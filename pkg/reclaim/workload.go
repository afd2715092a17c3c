package reclaim

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// condition is the Idle condition of any of the three kinds (a
// TensorBoard's has no reason).
type condition = tensorstackv1beta1.WorkloadCondition

// podRef is a pod a workload's status names.
type podRef struct {
	name string
	uid  types.UID
}

// workload is a Notebook, TensorBoard or Explorer, as the Keeper sees it.
type workload interface {
	// object is the API object.
	object() client.Object
	// kind is its kind, for logs and messages.
	kind() string
	// suspended tells whether spec.suspend is set.
	suspended() bool
	// idle returns a copy of the Idle condition, nil when there is none.
	idle() *condition
	// setIdle sets the Idle condition to c at now (interactive.SetCondition:
	// its transition time moves only with its status), leaving the others
	// as they are.
	setIdle(c condition, now metav1.Time)
	// podRefs are the pods its status names.
	podRefs() []podRef
	// jupyter tells whether it serves Jupyter's API.
	jupyter() bool
	// neverIdle says why it is never idle; empty when it may be.
	neverIdle() string
}

// sshRecorder is a workload whose status says when an SSH client was last
// seen.
type sshRecorder interface {
	// recordSSH moves the time forward to t, when the workload has an SSH
	// status.
	recordSSH(t time.Time)
}

// kind lists and reads the workloads of one kind.
type kind interface {
	// name of the kind.
	name() string
	// list the workloads of a namespace.
	list(ctx context.Context, r client.Reader, ns string) ([]workload, error)
	// get a workload.
	get(ctx context.Context, r client.Reader, key client.ObjectKey) (workload, error)
}

// kinds are the kinds the Keeper probes.
var kinds = []kind{notebookKind{}, tensorBoardKind{}, explorerKind{}}

// idleIn returns a copy of the Idle condition of conds, nil when there is
// none.
func idleIn(conds []tensorstackv1beta1.WorkloadCondition) *condition {
	if c := interactive.FindCondition(conds, tensorstackv1beta1.ConditionIdle); c != nil {
		idle := *c
		return &idle
	}
	return nil
}

// setIdleIn sets the Idle condition of conds to c at now.
func setIdleIn(conds *[]tensorstackv1beta1.WorkloadCondition, c condition, now metav1.Time) {
	c.Type = tensorstackv1beta1.ConditionIdle
	interactive.SetCondition(conds, c, now)
}

func refOf(p *tensorstackv1beta1.PodStatus) []podRef {
	if p == nil || p.Reference.Name == "" {
		return nil
	}
	return []podRef{{name: p.Reference.Name, uid: p.Reference.UID}}
}

// notebook is a Notebook.
type notebook struct{ *tensorstackv1beta1.Notebook }

func (w notebook) object() client.Object { return w.Notebook }
func (notebook) kind() string            { return "Notebook" }
func (w notebook) suspended() bool       { return w.Spec.Suspended() }
func (w notebook) idle() *condition      { return idleIn(w.Status.Conditions) }
func (w notebook) setIdle(c condition, now metav1.Time) {
	setIdleIn(&w.Status.Conditions, c, now)
}
func (w notebook) podRefs() []podRef { return refOf(w.Status.Pod) }
func (w notebook) jupyter() bool     { return w.Spec.Type != tensorstackv1beta1.NotebookRStudio }
func (w notebook) neverIdle() string {
	if w.Spec.Type == tensorstackv1beta1.NotebookRStudio {
		return "RStudio notebooks are never idle"
	}
	return ""
}

var _ sshRecorder = notebook{}

func (w notebook) recordSSH(t time.Time) {
	s := w.Status.SSH
	if s == nil || (s.LastSSHClientActivity != nil && !t.After(s.LastSSHClientActivity.Time)) {
		return
	}
	s.LastSSHClientActivity = &metav1.Time{Time: t}
}

type notebookKind struct{}

func (notebookKind) name() string { return "Notebook" }
func (notebookKind) list(ctx context.Context, r client.Reader, ns string) ([]workload, error) {
	var l tensorstackv1beta1.NotebookList
	if err := r.List(ctx, &l, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := make([]workload, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, notebook{&l.Items[i]})
	}
	return out, nil
}
func (notebookKind) get(ctx context.Context, r client.Reader, key client.ObjectKey) (workload, error) {
	o := &tensorstackv1beta1.Notebook{}
	return notebook{o}, r.Get(ctx, key, o)
}

// tensorBoard is a TensorBoard, whose conditions have no reason.
type tensorBoard struct {
	*tensorstackv1beta1.TensorBoard
}

func (w tensorBoard) object() client.Object { return w.TensorBoard }
func (tensorBoard) kind() string            { return "TensorBoard" }
func (w tensorBoard) suspended() bool       { return w.Spec.Suspend }
func (w tensorBoard) idle() *condition {
	return idleIn(interactive.FromTensorBoardConditions(w.Status.Conditions))
}
func (w tensorBoard) setIdle(c condition, now metav1.Time) {
	conds := interactive.FromTensorBoardConditions(w.Status.Conditions)
	setIdleIn(&conds, c, now)
	w.Status.Conditions = interactive.ToTensorBoardConditions(conds)
}
func (w tensorBoard) podRefs() []podRef { return refOf(w.Status.Pod) }
func (tensorBoard) jupyter() bool       { return false }
func (tensorBoard) neverIdle() string   { return "" }

type tensorBoardKind struct{}

func (tensorBoardKind) name() string { return "TensorBoard" }
func (tensorBoardKind) list(ctx context.Context, r client.Reader, ns string) ([]workload, error) {
	var l tensorstackv1beta1.TensorBoardList
	if err := r.List(ctx, &l, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := make([]workload, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, tensorBoard{&l.Items[i]})
	}
	return out, nil
}
func (tensorBoardKind) get(ctx context.Context, r client.Reader, key client.ObjectKey) (workload, error) {
	o := &tensorstackv1beta1.TensorBoard{}
	return tensorBoard{o}, r.Get(ctx, key, o)
}

// explorer is an Explorer: a file browser pod and a code-server pod.
type explorer struct{ *tensorstackv1beta1.Explorer }

func (w explorer) object() client.Object { return w.Explorer }
func (explorer) kind() string            { return "Explorer" }
func (w explorer) suspended() bool       { return w.Spec.Suspend }
func (w explorer) idle() *condition      { return idleIn(w.Status.Conditions) }
func (w explorer) setIdle(c condition, now metav1.Time) {
	setIdleIn(&w.Status.Conditions, c, now)
}
func (w explorer) podRefs() []podRef {
	var out []podRef
	for _, r := range []*tensorstackv1beta1.ResourceStatus{w.Status.CodeServer, w.Status.FileBrowser} {
		if r != nil {
			out = append(out, refOf(r.Pod)...)
		}
	}
	return out
}
func (explorer) jupyter() bool     { return false }
func (explorer) neverIdle() string { return "" }

type explorerKind struct{}

func (explorerKind) name() string { return "Explorer" }
func (explorerKind) list(ctx context.Context, r client.Reader, ns string) ([]workload, error) {
	var l tensorstackv1beta1.ExplorerList
	if err := r.List(ctx, &l, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := make([]workload, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, explorer{&l.Items[i]})
	}
	return out, nil
}
func (explorerKind) get(ctx context.Context, r client.Reader, key client.ObjectKey) (workload, error) {
	o := &tensorstackv1beta1.Explorer{}
	return explorer{o}, r.Get(ctx, key, o)
}
