package t9kcli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/describe"
)

// describeCommand prints what a user needs to know of one object of k to
// see why it does or does not run: its phase and conditions, its pods
// with their states, its PodGroup and queue, and the events of all of
// them.
func (o *options) describeCommand(k kind) *cobra.Command {
	var color bool
	cmd := &cobra.Command{
		Use:               "describe NAME",
		Aliases:           []string{"desc"},
		Short:             fmt.Sprintf("Show a %s in detail, with its pods, queue and events", k.display),
		Example:           fmt.Sprintf("  t9k %s describe foo -p demo", k.alias),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeNames(k),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, obj, err := o.object(cmd.Context(), k, args[0])
			if err != nil {
				return err
			}
			cs, _, err := o.clients()
			if err != nil {
				return err
			}
			d := &describer{cs: cs, now: time.Now(), get: func(ctx context.Context, k kind, name string) (*unstructured.Unstructured, error) {
				_, u, err := o.object(ctx, k, name)
				return u, err
			}}
			var text bytes.Buffer
			tw := tabwriter.NewWriter(&text, 0, 8, 2, ' ', 0)
			if err := d.describe(cmd.Context(), tw, k, obj); err != nil {
				return err
			}
			if err := tw.Flush(); err != nil {
				return fmt.Errorf("formatting: %w", err)
			}
			out := text.String()
			if color {
				out = colorize(out)
			}
			_, err = io.WriteString(o.streams.Out, out)
			return err
		},
	}
	cmd.Flags().BoolVar(&color, "color", false, "Color the phases, condition states and warnings")
	return cmd
}

// describer gathers what describe prints.
type describer struct {
	cs kubernetes.Interface
	// get reads an object of a kind: the queue, the PodGroup.
	get func(ctx context.Context, k kind, name string) (*unstructured.Unstructured, error)
	now time.Time
}

// describe writes the description of obj, of kind k, to out.
func (d *describer) describe(ctx context.Context, out io.Writer, k kind, obj *unstructured.Unstructured) error {
	w := describe.NewPrefixWriter(out)
	w.Write(describe.LEVEL_0, "Name:\t%s\n", obj.GetName())
	if ns := obj.GetNamespace(); ns != "" {
		w.Write(describe.LEVEL_0, "Project:\t%s\n", ns)
	}
	w.Write(describe.LEVEL_0, "Kind:\t%s\n", k.display)
	w.Write(describe.LEVEL_0, "Created:\t%s (%s ago)\n", obj.GetCreationTimestamp().UTC().Format(time.RFC3339), d.age(obj.GetCreationTimestamp()))
	if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase != "" {
		w.Write(describe.LEVEL_0, "Phase:\t%s\n", phase)
	}
	if url, _, _ := unstructured.NestedString(obj.Object, "status", "url"); url != "" {
		w.Write(describe.LEVEL_0, "URL:\t%s\n", url)
	}
	d.conditions(w, obj)
	d.tasks(w, obj)
	queue, _, _ := unstructured.NestedString(obj.Object, "spec", "scheduler", "t9kScheduler", "queue")
	if obj.GetNamespace() != "" && queue != "" {
		d.scheduling(ctx, w, obj, queue)
	}
	uids := map[types.UID]bool{obj.GetUID(): true}
	if obj.GetNamespace() != "" {
		pods, err := d.pods(ctx, obj)
		if err != nil {
			return err
		}
		d.podTable(w, pods)
		for _, p := range pods {
			uids[p.UID] = true
		}
	}
	eventsNS := obj.GetNamespace()
	if eventsNS == "" {
		eventsNS = metav1.NamespaceDefault // where the events of cluster-scoped objects go
	}
	return d.events(ctx, w, eventsNS, uids)
}

// conditions writes status.conditions as a table.
func (d *describer) conditions(w describe.PrefixWriter, obj *unstructured.Unstructured) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if len(conds) == 0 {
		return
	}
	w.Write(describe.LEVEL_0, "Conditions:\n")
	w.Write(describe.LEVEL_1, "Type\tStatus\tReason\tAge\tMessage\n")
	w.Write(describe.LEVEL_1, "----\t------\t------\t---\t-------\n")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		age := "-"
		if t, err := time.Parse(time.RFC3339, str(m, "lastTransitionTime")); err == nil {
			age = d.age(metav1.NewTime(t))
		}
		w.Write(describe.LEVEL_1, "%s\t%s\t%s\t%s\t%s\n", str(m, "type"), str(m, "status"), str(m, "reason"), age, str(m, "message"))
	}
}

// tasks writes the replicas of status.tasks by type.
func (d *describer) tasks(w describe.PrefixWriter, obj *unstructured.Unstructured) {
	tasks, _, _ := unstructured.NestedSlice(obj.Object, "status", "tasks")
	if len(tasks) == 0 {
		return
	}
	w.Write(describe.LEVEL_0, "Replicas:\n")
	w.Write(describe.LEVEL_1, "Type\tRestarts\tPods\n")
	w.Write(describe.LEVEL_1, "----\t--------\t----\n")
	for _, t := range tasks {
		m, _ := t.(map[string]any)
		restarts, _, _ := unstructured.NestedInt64(m, "restartCount")
		reps, _, _ := unstructured.NestedSlice(m, "replicas")
		var pods []string
		for _, r := range reps {
			rm, _ := r.(map[string]any)
			pods = append(pods, fmt.Sprintf("%s (%s)", str(rm, "name"), str(rm, "phase")))
		}
		w.Write(describe.LEVEL_1, "%s\t%d\t%s\n", str(m, "type"), restarts, strings.Join(pods, ", "))
	}
}

// scheduling writes the job's PodGroup and its queue: whether the queue is
// open, and what it has allocated of its quota.
func (d *describer) scheduling(ctx context.Context, w describe.PrefixWriter, obj *unstructured.Unstructured, queue string) {
	w.Write(describe.LEVEL_0, "Queue:\t%s\n", queue)
	if q, err := d.get(ctx, kindNamed("queue"), queue); err != nil {
		w.Write(describe.LEVEL_1, "(the queue cannot be read: %s)\n", reason(err))
	} else {
		closed, _, _ := unstructured.NestedBool(q.Object, "spec", "closed")
		w.Write(describe.LEVEL_1, "Closed:\t%t\n", closed)
		quota, _, _ := unstructured.NestedStringMap(q.Object, "spec", "quota", "requests")
		allocated, _, _ := unstructured.NestedStringMap(q.Object, "status", "allocated")
		if len(quota) > 0 {
			w.Write(describe.LEVEL_1, "Quota:\t%s\n", resourceList(quota, allocated))
		}
	}
	if pg, err := d.get(ctx, kindNamed("podgroup"), obj.GetName()); err == nil {
		w.Write(describe.LEVEL_0, "PodGroup:\t%s\n", pg.GetName())
		conds, _, _ := unstructured.NestedSlice(pg.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			w.Write(describe.LEVEL_1, "%s=%s\t%s\t%s\n", str(m, "type"), str(m, "status"), str(m, "reason"), str(m, "message"))
		}
	}
}

// pods returns the pods obj owns, directly or through the ReplicaSets,
// Deployments, StatefulSets and Jobs it owns, by name.
func (d *describer) pods(ctx context.Context, obj *unstructured.Unstructured) ([]corev1.Pod, error) {
	ns := obj.GetNamespace()
	owned := map[types.UID]bool{obj.GetUID(): true}
	// Deployments own ReplicaSets: two passes over the owners reach pods.
	for range 2 {
		d.ownedControllers(ctx, ns, owned)
	}
	list, err := d.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	var pods []corev1.Pod
	for _, p := range list.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && owned[ref.UID] {
			pods = append(pods, p)
		}
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods, nil
}

// ownedControllers adds to owned the UIDs of the workload controllers in
// ns (ReplicaSets, Deployments, StatefulSets, Jobs) that something in
// owned controls. A kind the user may not list is passed over.
func (d *describer) ownedControllers(ctx context.Context, ns string, owned map[types.UID]bool) {
	opts := metav1.ListOptions{}
	lists := []func() ([]metav1.Object, error){
		func() ([]metav1.Object, error) {
			l, err := d.cs.AppsV1().ReplicaSets(ns).List(ctx, opts)
			return metas(l, err)
		},
		func() ([]metav1.Object, error) {
			l, err := d.cs.AppsV1().Deployments(ns).List(ctx, opts)
			return metas(l, err)
		},
		func() ([]metav1.Object, error) {
			l, err := d.cs.AppsV1().StatefulSets(ns).List(ctx, opts)
			return metas(l, err)
		},
		func() ([]metav1.Object, error) {
			l, err := d.cs.BatchV1().Jobs(ns).List(ctx, opts)
			return metas(l, err)
		},
	}
	for _, list := range lists {
		objs, err := list()
		if err != nil {
			continue
		}
		for _, m := range objs {
			if ref := metav1.GetControllerOf(m); ref != nil && owned[ref.UID] {
				owned[m.GetUID()] = true
			}
		}
	}
}

// metas returns the metadata of the items of list.
func metas(list runtime.Object, err error) ([]metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]metav1.Object, 0, len(items))
	for _, it := range items {
		if m, err := meta.Accessor(it); err == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// podTable writes the pods with their phase, node, restarts and why
// they wait or ended.
func (d *describer) podTable(w describe.PrefixWriter, pods []corev1.Pod) {
	if len(pods) == 0 {
		w.Write(describe.LEVEL_0, "Pods:\t<none>\n")
		return
	}
	w.Write(describe.LEVEL_0, "Pods:\n")
	w.Write(describe.LEVEL_1, "Name\tPhase\tNode\tRestarts\tAge\tWhy\n")
	w.Write(describe.LEVEL_1, "----\t-----\t----\t--------\t---\t---\n")
	for _, p := range pods {
		restarts := int32(0)
		for _, c := range p.Status.ContainerStatuses {
			restarts += c.RestartCount
		}
		node := p.Spec.NodeName
		if node == "" {
			node = "<none>"
		}
		w.Write(describe.LEVEL_1, "%s\t%s\t%s\t%d\t%s\t%s\n", p.Name, p.Status.Phase, node, restarts, d.age(p.CreationTimestamp), podWhy(&p))
	}
}

// podWhy says why a pod waits or ended: an unschedulable condition, a
// waiting or terminated container, "" when it runs.
func podWhy(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c.Reason + ": " + c.Message
		}
	}
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.State.Waiting != nil:
			return c.Name + ": " + strings.TrimSuffix(c.State.Waiting.Reason+": "+c.State.Waiting.Message, ": ")
		case c.State.Terminated != nil && c.State.Terminated.ExitCode != 0:
			return fmt.Sprintf("%s: %s, exit code %d", c.Name, c.State.Terminated.Reason, c.State.Terminated.ExitCode)
		}
	}
	return ""
}

// events writes the events of the objects of uids in ns, oldest first.
func (d *describer) events(ctx context.Context, w describe.PrefixWriter, ns string, uids map[types.UID]bool) error {
	list, err := d.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		if apierrors.IsForbidden(err) {
			w.Write(describe.LEVEL_0, "Events:\t(cannot be read: %s)\n", reason(err))
			return nil
		}
		return fmt.Errorf("listing events: %w", err)
	}
	var evs []corev1.Event
	for _, e := range list.Items {
		if uids[e.InvolvedObject.UID] {
			evs = append(evs, e)
		}
	}
	if len(evs) == 0 {
		w.Write(describe.LEVEL_0, "Events:\t<none>\n")
		return nil
	}
	sort.SliceStable(evs, func(i, j int) bool { return lastSeen(&evs[i]).Before(lastSeen(&evs[j])) })
	w.Write(describe.LEVEL_0, "Events:\n")
	w.Write(describe.LEVEL_1, "Type\tReason\tAge\tObject\tMessage\n")
	w.Write(describe.LEVEL_1, "----\t------\t---\t------\t-------\n")
	for _, e := range evs {
		w.Write(describe.LEVEL_1, "%s\t%s\t%s\t%s/%s\t%s\n", e.Type, e.Reason, d.age(metav1.NewTime(lastSeen(&e))),
			strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, strings.TrimSpace(e.Message))
	}
	return nil
}

// lastSeen is when an event last happened.
func lastSeen(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// age is the time from t to the describer's now, as kubectl prints it.
func (d *describer) age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(d.now.Sub(t.Time))
}

// resourceList writes quota as "cpu 38/40, memory ..." with what is
// allocated of each resource.
func resourceList(quota, allocated map[string]string) string {
	names := make([]string, 0, len(quota))
	for n := range quota {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		used := allocated[n]
		if used == "" {
			used = "0"
		}
		parts = append(parts, fmt.Sprintf("%s %s/%s", n, used, quota[n]))
	}
	return strings.Join(parts, ", ") + " (allocated/quota)"
}

// str is the string at key of m, "" when absent.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// reason is a short reason of an API error: Forbidden, NotFound, or the
// error.
func reason(err error) string {
	if r := apierrors.ReasonForError(err); r != metav1.StatusReasonUnknown {
		return string(r)
	}
	return err.Error()
}
