package t9kcli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/cmd/get"
)

// getCommand is kubectl get over k's resource: names, -l, -A, -o
// json|yaml|wide|name|jsonpath=..., --watch, with the kind's printer
// columns as the table. -o template, the platform's name for the table,
// is the table.
func (o *options) getCommand(k kind) *cobra.Command {
	cmd := get.NewCmdGet("t9k", o.factory, o.streams)
	run := cmd.Run
	cmd.Use = "get [NAME...]"
	cmd.Short = fmt.Sprintf("List %ss, or show the named ones", k.display)
	cmd.Long = fmt.Sprintf("List the %ss of the project (-A: of every project), or show the named ones.\n\n"+
		"The table is the default output (-o template names it too); -o json, yaml, wide, name,\n"+
		"jsonpath=... and custom-columns=... are kubectl's.", k.display)
	cmd.Example = fmt.Sprintf("  t9k %[1]s get -p demo\n  t9k %[1]s get -A\n  t9k %[1]s get foo bar -p demo\n  t9k %[1]s get foo -p demo -o yaml", k.alias)
	cmd.ValidArgsFunction = o.completeNames(k)
	cmd.Run = func(c *cobra.Command, args []string) {
		if f := c.Flags().Lookup("output"); f != nil && f.Value.String() == "template" && !c.Flags().Changed("template") {
			_ = f.Value.Set("")
		}
		run(c, append([]string{k.resource}, args...))
	}
	return cmd
}
