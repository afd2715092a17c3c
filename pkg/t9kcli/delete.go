package t9kcli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// deleteCommand deletes the named objects of k, or all of them with
// --all, after a confirmation unless -f.
func (o *options) deleteCommand(k kind) *cobra.Command {
	var all, force bool
	cmd := &cobra.Command{
		Use:     "delete [NAME...]",
		Aliases: []string{"rm"},
		Short:   fmt.Sprintf("Delete %ss", k.display),
		Long: fmt.Sprintf("Delete the named %ss of the project, or with --all every one of them (names given\n"+
			"with --all are ignored). It asks first unless -f/--force.", k.display),
		Example:           fmt.Sprintf("  t9k %[1]s delete foo bar -p demo\n  t9k %[1]s delete foo -p demo -f\n  t9k %[1]s delete --all -p demo", k.alias),
		ValidArgsFunction: o.completeNames(k),
		RunE: func(cmd *cobra.Command, names []string) error {
			r, err := o.resource(k)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if all {
				if len(names) > 0 {
					fmt.Fprintf(o.streams.ErrOut, "warning: --all deletes every %s; the names given are ignored\n", k.display)
				}
				if names, err = listNames(ctx, r); err != nil {
					return err
				}
				if len(names) == 0 {
					fmt.Fprintf(o.streams.Out, "No %ss found.\n", k.display)
					return nil
				}
			}
			if len(names) == 0 {
				return usageError(cmd, "name the %ss to delete, or give --all", k.display)
			}
			if !force && !o.confirm(fmt.Sprintf("Delete %s %s?", k.display, strings.Join(names, ", "))) {
				fmt.Fprintln(o.streams.Out, "Nothing deleted.")
				return nil
			}
			var failed error
			for _, name := range names {
				err := r.Delete(ctx, name, metav1.DeleteOptions{})
				switch {
				case err == nil:
					fmt.Fprintf(o.streams.Out, "%s %q deleted\n", k.resource, name)
				case apierrors.IsNotFound(err):
					fmt.Fprintf(o.streams.ErrOut, "%s %q not found\n", k.display, name)
					failed = err
				default:
					failed = fmt.Errorf("deleting %s %s: %w", k.display, name, err)
					fmt.Fprintln(o.streams.ErrOut, failed)
				}
			}
			if failed != nil {
				return errSilent
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, fmt.Sprintf("Delete every %s of the project", k.display))
	cmd.Flags().BoolVarP(&force, "force", "f", false, "Do not ask for confirmation")
	return cmd
}

// confirm asks question on the output and reads y or yes from the input.
func (o *options) confirm(question string) bool {
	fmt.Fprintf(o.streams.Out, "%s [y/N]: ", question)
	line, _ := bufio.NewReader(o.streams.In).ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes"
}

// resource returns the dynamic client of k's objects in the project (of
// every project for a cluster-scoped kind).
func (o *options) resource(k kind) (dynamic.ResourceInterface, error) {
	_, dc, err := o.clients()
	if err != nil {
		return nil, err
	}
	gvr, err := o.gvr(k)
	if err != nil {
		return nil, err
	}
	if k.clusterScoped {
		return dc.Resource(gvr), nil
	}
	ns, err := o.namespace()
	if err != nil {
		return nil, err
	}
	return dc.Resource(gvr).Namespace(ns), nil
}

// gvr resolves k's resource to the version the server serves.
func (o *options) gvr(k kind) (schema.GroupVersionResource, error) {
	mapper, err := o.factory.ToRESTMapper()
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	gvr, err := mapper.ResourceFor(schema.ParseGroupResource(k.resource).WithVersion(""))
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("the server does not serve %ss (%s): %w", k.display, k.resource, err)
	}
	return gvr, nil
}

// listNames returns the names of the objects of r.
func listNames(ctx context.Context, r dynamic.ResourceInterface) ([]string, error) {
	list, err := r.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.Items))
	for _, item := range list.Items {
		names = append(names, item.GetName())
	}
	return names, nil
}

// completeNames completes the names of k's objects in the project.
func (o *options) completeNames(k kind) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		r, err := o.resource(k)
		if err != nil {
			cobra.CompErrorln(err.Error())
			return nil, cobra.ShellCompDirectiveError
		}
		names, err := listNames(cmd.Context(), r)
		if err != nil {
			cobra.CompErrorln(err.Error())
			return nil, cobra.ShellCompDirectiveError
		}
		var out []cobra.Completion
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
