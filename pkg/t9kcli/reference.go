package t9kcli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Reference is the command reference of docs/cli.md, in Markdown, written
// from the command tree of root so that it cannot drift from it: for each
// command its subcommands with their usage, what they do and their own
// flags (the global flags are listed once).
func Reference(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("### Global flags\n\n| Flag | Meaning |\n|---|---|\n")
	flagRows(&b, root.PersistentFlags())
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		fmt.Fprintf(&b, "\n### `t9k %s`", c.Name())
		if len(c.Aliases) > 0 {
			fmt.Fprintf(&b, " (`%s`)", strings.Join(c.Aliases, "`, `"))
		}
		b.WriteString("\n\n")
		subs := c.Commands()
		if len(subs) == 0 {
			subs = []*cobra.Command{c}
		}
		for _, s := range subs {
			fmt.Fprintf(&b, "- `%s`", s.CommandPath()+strings.TrimPrefix(s.Use, s.Name()))
			if len(s.Aliases) > 0 {
				fmt.Fprintf(&b, " (also `%s`)", strings.Join(s.Aliases, "`, `"))
			}
			fmt.Fprintf(&b, ": %s.", strings.TrimSuffix(s.Short, "."))
			var flags []string
			s.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
				if f.Name != "help" && !f.Hidden {
					flags = append(flags, flagName(f))
				}
			})
			if len(flags) > 0 && s.Name() != "get" {
				fmt.Fprintf(&b, " Flags: %s.", strings.Join(flags, ", "))
			}
			if s.Name() == "get" {
				b.WriteString(" Flags: kubectl get's (`-o`, `-l`, `-A`, `-w`, `--show-labels`, `--sort-by`, ...).")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// flagRows writes a table row per flag of fs.
func flagRows(b *strings.Builder, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		fmt.Fprintf(b, "| %s | %s |\n", flagName(f), strings.ReplaceAll(f.Usage, "|", `\|`))
	})
}

// flagName is -s, --name (or --name) in backquotes, with its default when
// it has one worth saying.
func flagName(f *pflag.Flag) string {
	name := "`--" + f.Name + "`"
	if f.Shorthand != "" {
		name = "`-" + f.Shorthand + "`, " + name
	}
	d := f.DefValue
	if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(d, home+"/") {
		d = "~" + strings.TrimPrefix(d, home) // the reader's home, not this machine's
	}
	if d != "" && d != "false" && d != "[]" && d != "0" {
		name += " (default `" + d + "`)"
	}
	return name
}
