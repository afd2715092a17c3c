package t9kcli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/dynamic"
)

// changeFlags are --dry-run and -o of the commands that create or change
// an object: with --dry-run the API server checks the change (validation
// and admission, nothing stored) and the object it would store is
// printed, as YAML or JSON.
type changeFlags struct {
	dryRun bool
	output string
}

// add adds --dry-run and -o.
func (c *changeFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&c.dryRun, "dry-run", false, "Check the change with the server and print the object, storing nothing")
	cmd.Flags().StringVarP(&c.output, "output", "o", "yaml", "The format of --dry-run's object: yaml or json")
}

// validate refuses an output format other than yaml or json.
func (c *changeFlags) validate(cmd *cobra.Command) error {
	if c.output != "yaml" && c.output != "json" {
		return usageError(cmd, "-o must be yaml or json, not %q", c.output)
	}
	return nil
}

// save creates obj (create true) or updates it in r, or with --dry-run
// asks the server to and prints the result. It returns the object stored
// or that would be.
func (o *options) save(ctx context.Context, c *changeFlags, r dynamic.ResourceInterface, obj runtime.Object, create bool) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	var dryRun []string
	if c.dryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	var saved *unstructured.Unstructured
	if create {
		saved, err = r.Create(ctx, u, metav1.CreateOptions{DryRun: dryRun})
	} else {
		saved, err = r.Update(ctx, u, metav1.UpdateOptions{DryRun: dryRun})
	}
	if err != nil {
		return nil, err
	}
	if c.dryRun {
		var p printers.ResourcePrinter = &printers.YAMLPrinter{}
		if c.output == "json" {
			p = &printers.JSONPrinter{}
		}
		if err := p.PrintObj(saved, o.streams.Out); err != nil {
			return nil, fmt.Errorf("printing the object: %w", err)
		}
	}
	return saved, nil
}

// object reads name, of kind k, in the project, and returns it with the
// client of its kind.
func (o *options) object(ctx context.Context, k kind, name string) (dynamic.ResourceInterface, *unstructured.Unstructured, error) {
	r, err := o.resource(k)
	if err != nil {
		return nil, nil, err
	}
	obj, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("getting %s %s: %w", k.display, name, err)
	}
	return r, obj, nil
}

// typed reads name, of kind k, into obj, a typed object, and returns the
// client of its kind.
func (o *options) typed(ctx context.Context, k kind, name string, obj runtime.Object) (dynamic.ResourceInterface, error) {
	r, u, err := o.object(ctx, k, name)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", k.display, name, err)
	}
	return r, nil
}
