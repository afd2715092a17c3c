package t9kcli

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// waitCommand waits for a job or workflow run to end, printing the log of
// a replica meanwhile with --print-log; it fails unless the end is
// success.
func (o *options) waitCommand(k kind) *cobra.Command {
	var (
		f               logFlags
		timeout, period time.Duration
		printLog        bool
	)
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: fmt.Sprintf("Wait for a %s to end", k.display),
		Long: fmt.Sprintf("Wait until the %s ends (%v) and exit 0 only if it %s. With --print-log,\n"+
			"follow the log of a replica meanwhile, across the replica's restarts.", k.display, k.terminal, k.terminal[0]),
		Example:           fmt.Sprintf("  t9k %[1]s wait foo -p demo --timeout 10m\n  t9k %[1]s wait foo --print-log -p demo", k.alias),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeNames(k),
		RunE: func(cmd *cobra.Command, args []string) error {
			if period <= 0 {
				return usageError(cmd, "--period must be positive")
			}
			r, err := o.resource(k)
			if err != nil {
				return err
			}
			cs, _, err := o.clients()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var finish func(grace time.Duration)
			if printLog {
				f.tail = -1 // the whole log
				finish = o.printReplicaLog(ctx, cs, r, k, args[0], &f, period)
			}
			phase, err := waitPhase(ctx, r, args[0], k.terminal, period, timeout)
			if finish != nil {
				grace := logGrace // the job ended: let its last log lines out
				if err != nil {
					grace = 0
				}
				finish(grace)
			}
			if err != nil {
				return err
			}
			if phase != k.terminal[0] {
				return fmt.Errorf("%s %s ended %s", k.display, args[0], phase)
			}
			fmt.Fprintf(o.streams.ErrOut, "%s %s %s\n", k.display, args[0], phase)
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", time.Hour, "How long to wait")
	cmd.Flags().DurationVar(&period, "period", time.Second, "How often to look")
	cmd.Flags().BoolVar(&printLog, "print-log", false, "Print a replica's log while waiting (--type, --index, --container choose it)")
	f.add(cmd.Flags(), k, false)
	return cmd
}

// waitPhase polls name every period until its status.phase is one of
// terminal and returns it, or fails after timeout.
func waitPhase(ctx context.Context, r dynamic.ResourceInterface, name string, terminal []string, period, timeout time.Duration) (string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		obj, err := r.Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); slices.Contains(terminal, phase) {
				return phase, nil
			}
		case apierrors.IsNotFound(err):
			return "", fmt.Errorf("%s does not exist: %w", name, err)
		default:
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-deadline.C:
			return "", fmt.Errorf("timed out after %s waiting for %s to end", timeout, name)
		case <-tick.C:
		}
	}
}

// logGrace bounds how long wait, once the job has ended, lets the log
// follower finish printing the replica's last pod.
const logGrace = 30 * time.Second

// printReplicaLog starts following the log of the replica f chooses and
// returns the function that ends it: it lets the follower print the
// replica's last pod to its end (for at most grace), then stops it.
func (o *options) printReplicaLog(ctx context.Context, cs kubernetes.Interface, r dynamic.ResourceInterface, k kind, name string, f *logFlags, period time.Duration) func(grace time.Duration) {
	logCtx, stop := context.WithCancel(ctx)
	ending, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		o.followReplica(logCtx, ending, cs, r, k, name, f, period)
	}()
	return func(grace time.Duration) {
		close(ending)
		select {
		case <-done:
		case <-time.After(grace):
		}
		stop()
		<-done
	}
}

// followReplica prints the log of the replica f chooses: it waits for the
// pod to start, follows its log, and follows the next pod when the
// replica is recreated. Once ending is closed it prints the pod it has not
// printed yet, if any, and returns; it returns at once when ctx ends.
func (o *options) followReplica(ctx context.Context, ending <-chan struct{}, cs kubernetes.Interface, r dynamic.ResourceInterface, k kind, name string, f *logFlags, period time.Duration) {
	f.follow = true
	var printed types.UID
	for ctx.Err() == nil {
		last := isClosed(ending)
		if obj, err := r.Get(ctx, name, metav1.GetOptions{}); err == nil {
			pod, err := replicaPod(ctx, cs, k, obj, f)
			switch {
			case err != nil:
				fmt.Fprintln(o.streams.ErrOut, "error:", err)
				return
			case pod != nil && pod.UID != printed && pod.Status.Phase != corev1.PodPending:
				if err := streamLog(ctx, cs, o.streams.Out, pod, f); err != nil && ctx.Err() == nil {
					fmt.Fprintln(o.streams.ErrOut, "error:", err)
				}
				printed = pod.UID
				f.tail = -1 // --tail is of the first pod; a later pod is printed whole
			}
		}
		if last {
			return
		}
		select {
		case <-ctx.Done():
		case <-ending:
		case <-time.After(period):
		}
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
