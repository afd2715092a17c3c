package t9kcli

import (
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// queueStateCommand is t9k queue open or close: it sets spec.closed.
func (o *options) queueStateCommand(verb string, closed bool) *cobra.Command {
	q := kindNamed("queue")
	what := "admits new workloads again"
	if closed {
		what = "refuses new workloads and places no more pods"
	}
	return &cobra.Command{
		Use:               verb + " NAME",
		Short:             fmt.Sprintf("%s a queue: it %s (cluster admins)", title(verb), what),
		Example:           fmt.Sprintf("  t9k queue %s foo", verb),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeNames(q),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := o.resource(q)
			if err != nil {
				return err
			}
			patch := fmt.Appendf(nil, `{"spec":{"closed":%t}}`, closed)
			if _, err := r.Patch(cmd.Context(), args[0], types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("%s queue %s: %w", verb, args[0], err)
			}
			fmt.Fprintf(o.streams.Out, "queue %q %sd\n", args[0], map[bool]string{true: "close", false: "opene"}[closed])
			return nil
		},
	}
}

// title is s with its first letter in upper case.
func title(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
