package t9kcli

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
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
			if printLog {
				logCtx, stop := context.WithCancel(ctx)
				done := make(chan struct{})
				go func() {
					defer close(done)
					o.followReplica(logCtx, cs, r, k, args[0], &f, period)
				}()
				defer func() { stop(); <-done }()
			}
			phase, err := waitPhase(ctx, r, args[0], k.terminal, period, timeout)
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

// followReplica prints the log of the replica f chooses until ctx ends:
// it waits for the pod to appear, follows its log, and follows the next
// pod when the replica is recreated.
func (o *options) followReplica(ctx context.Context, cs kubernetes.Interface, r dynamic.ResourceInterface, k kind, name string, f *logFlags, period time.Duration) {
	f.follow, f.tail = true, -1
	var done types.UID
	for ctx.Err() == nil {
		obj, err := r.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			pod, err := replicaPod(ctx, cs, k, obj, f)
			switch {
			case err != nil:
				fmt.Fprintln(o.streams.ErrOut, "error:", err)
				return
			case pod != nil && pod.UID != done && pod.Status.Phase != "Pending":
				if err := streamLog(ctx, cs, o.streams.Out, pod, f); err != nil && ctx.Err() == nil {
					fmt.Fprintln(o.streams.ErrOut, "error:", err)
				}
				done = pod.UID
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(period):
		}
	}
}
