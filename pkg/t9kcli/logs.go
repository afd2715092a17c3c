package t9kcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// logFlags choose a replica's pod and container and how its log is read.
type logFlags struct {
	replicaType string
	index       int
	container   string
	follow      bool
	tail        int64
	timestamps  bool
}

// add adds the flags; withFollow adds -f/--follow and --tail (logs has
// them, wait --print-log always follows the whole log).
func (f *logFlags) add(fs *pflag.FlagSet, k kind, withFollow bool) {
	if k.name != "workflowrun" {
		help := "The replica type: " + strings.Join(k.replicaTypes, ", ") + " (default " + firstOr(k.replicaTypes, "the first of spec.replicaSpecs") + ")"
		if k.openTypes {
			help = "The replica type, one of the job's spec.replicaSpecs (default the first)"
		}
		fs.StringVar(&f.replicaType, "type", "", help)
		fs.IntVar(&f.index, "index", 0, "The replica's index within its type")
	}
	fs.StringVar(&f.container, "container", "", "The container, when the pod has more than one")
	fs.BoolVar(&f.timestamps, "timestamps", false, "Print the time of each line")
	if withFollow {
		fs.BoolVarP(&f.follow, "follow", "f", false, "Stream the log as it grows")
		fs.Int64Var(&f.tail, "tail", -1, "Print the last N lines only; -1 prints all")
	}
}

// logsCommand prints the log of one replica of a job, or of a workflow
// run's pod.
func (o *options) logsCommand(k kind) *cobra.Command {
	var f logFlags
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: fmt.Sprintf("Print the log of a %s's replica", k.display),
		Long: fmt.Sprintf("Print the log of one replica of the %s, chosen by --type and --index (default\n"+
			"the %s replica 0), or of its only pod.", k.display, firstOr(k.replicaTypes, "first")),
		Example:           fmt.Sprintf("  t9k %[1]s logs foo -p demo\n  t9k %[1]s logs foo --type=%[2]s --index=1 -p demo --follow\n  t9k %[1]s logs foo --tail 20", k.alias, firstOr(k.replicaTypes, "worker")),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeNames(k),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.index < 0 {
				return usageError(cmd, "--index must be 0 or more, not %d", f.index)
			}
			_, obj, err := o.object(cmd.Context(), k, args[0])
			if err != nil {
				return err
			}
			cs, _, err := o.clients()
			if err != nil {
				return err
			}
			if f.follow {
				return o.followLogs(cmd.Context(), cs, k, obj, &f)
			}
			pod, err := replicaPod(cmd.Context(), cs, k, obj, &f)
			if err != nil {
				return err
			}
			if pod == nil {
				return fmt.Errorf("%s %s has no %s pod yet", k.display, obj.GetName(), f.describeReplica(k))
			}
			return streamLog(cmd.Context(), cs, o.streams.Out, pod, &f)
		},
	}
	f.add(cmd.Flags(), k, true)
	return cmd
}

// followLogs follows the log of the replica f chooses of obj until obj
// ends, as wait --print-log does: it waits for the replica's pod to
// start, and follows the next pod when the replica is recreated. It also
// checks the replica type at once, so a wrong one fails before any wait.
func (o *options) followLogs(ctx context.Context, cs kubernetes.Interface, k kind, obj *unstructured.Unstructured, f *logFlags) error {
	if _, err := replicaPod(ctx, cs, k, obj, f); err != nil {
		return err
	}
	r, err := o.resource(k)
	if err != nil {
		return err
	}
	finish := o.printReplicaLog(ctx, cs, r, k, obj.GetName(), f, time.Second)
	_, err = waitPhase(ctx, r, obj.GetName(), k.terminal, time.Second, forever)
	if errors.Is(err, context.Canceled) {
		finish(0)
		return nil // the user stopped following
	}
	finish(logGrace)
	return err
}

// forever is a timeout that never comes: 100 years.
const forever = 100 * 365 * 24 * time.Hour

// describeReplica names the replica f chooses, for messages.
func (f *logFlags) describeReplica(k kind) string {
	if k.name == "workflowrun" {
		return "step"
	}
	return fmt.Sprintf("%s %d", f.replicaType, f.index)
}

// replicaPod returns the pod of the replica f chooses of obj, nil when it
// has none yet. It settles f.replicaType: the default, or the one given if
// the kind has it (an error listing the valid ones otherwise).
func replicaPod(ctx context.Context, cs kubernetes.Interface, k kind, obj *unstructured.Unstructured, f *logFlags) (*corev1.Pod, error) {
	ns := obj.GetNamespace()
	if k.name == "workflowrun" {
		name, _, _ := unstructured.NestedString(obj.Object, "status", "podName")
		if name == "" {
			return firstPod(ctx, cs, ns, labels.Set{batchv1beta1.WorkflowRunLabel: obj.GetName()})
		}
		return getPod(ctx, cs, ns, name)
	}
	valid := k.replicaTypes
	if k.openTypes {
		specs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "replicaSpecs")
		valid = nil
		for _, s := range specs {
			m, _ := s.(map[string]any)
			valid = append(valid, str(m, "type"))
		}
	}
	switch {
	case f.replicaType == "" && len(valid) > 0:
		f.replicaType = valid[0]
	case !slices.Contains(valid, f.replicaType):
		return nil, fmt.Errorf("%s %s has no replica type %q; the valid types are: %s",
			k.display, obj.GetName(), f.replicaType, strings.Join(valid, ", "))
	}
	tasks, _, _ := unstructured.NestedSlice(obj.Object, "status", "tasks")
	for _, t := range tasks {
		m, _ := t.(map[string]any)
		if str(m, "type") != f.replicaType {
			continue
		}
		reps, _, _ := unstructured.NestedSlice(m, "replicas")
		if f.index < len(reps) {
			rm, _ := reps[f.index].(map[string]any)
			if name := str(rm, "name"); name != "" {
				if p, err := getPod(ctx, cs, ns, name); p != nil || err != nil {
					return p, err
				}
			}
		}
	}
	return firstPod(ctx, cs, ns, labels.Set{
		batchv1beta1.JobNameLabel:      obj.GetName(),
		batchv1beta1.ReplicaTypeLabel:  f.replicaType,
		batchv1beta1.ReplicaIndexLabel: strconv.Itoa(f.index),
	})
}

// getPod returns pod name of ns, nil when there is none.
func getPod(ctx context.Context, cs kubernetes.Interface, ns, name string) (*corev1.Pod, error) {
	p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting pod %s: %w", name, err)
	}
	return p, nil
}

// firstPod returns the newest pod of ns with the labels, nil when none.
func firstPod(ctx context.Context, cs kubernetes.Interface, ns string, set labels.Set) (*corev1.Pod, error) {
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: set.String()})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	var newest *corev1.Pod
	for i := range list.Items {
		if p := &list.Items[i]; newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp) {
			newest = p
		}
	}
	return newest, nil
}

// errNoContainer is a pod of several containers without --container.
var errNoContainer = errors.New("choose one with --container")

// container returns the container of pod to read: the one given, the
// pod's default (kubectl.kubernetes.io/default-container), or its only one.
func container(pod *corev1.Pod, given string) (string, error) {
	var names []string
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	switch {
	case given != "":
		if !slices.Contains(names, given) {
			return "", fmt.Errorf("pod %s has no container %q; its containers are: %s", pod.Name, given, strings.Join(names, ", "))
		}
		return given, nil
	case pod.Annotations["kubectl.kubernetes.io/default-container"] != "":
		return pod.Annotations["kubectl.kubernetes.io/default-container"], nil
	case len(names) == 1:
		return names[0], nil
	}
	return "", fmt.Errorf("pod %s has the containers %s: %w", pod.Name, strings.Join(names, ", "), errNoContainer)
}

// streamLog copies the log of pod's container to out.
func streamLog(ctx context.Context, cs kubernetes.Interface, out io.Writer, pod *corev1.Pod, f *logFlags) error {
	c, err := container(pod, f.container)
	if err != nil {
		return err
	}
	opts := &corev1.PodLogOptions{Container: c, Follow: f.follow, Timestamps: f.timestamps}
	if f.tail >= 0 {
		opts.TailLines = ptr.To(f.tail)
	}
	rc, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, opts).Stream(ctx)
	if err != nil {
		return fmt.Errorf("reading the log of pod %s: %w", pod.Name, err)
	}
	defer rc.Close()
	if _, err := io.Copy(out, rc); err != nil && ctx.Err() == nil {
		return fmt.Errorf("reading the log of pod %s: %w", pod.Name, err)
	}
	return nil
}

// firstOr is the first of s, or def when s is empty.
func firstOr(s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[0]
}
