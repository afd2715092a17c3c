// Package t9kcli is the t9k command line: for each kind of the platform,
// get, describe, delete, and for jobs and workflow runs logs and wait,
// under the kind's name or its short name (t9k pj get), with kubectl's
// connection flags and output formats, and the platform's -p/--project;
// beside them the kinds' own verbs (queue open, close, grant, revoke and
// grants, mls set-canary and delete-release, wt start, smls create,
// project create) and create -f and delete -f. get is kubectl's own get over the kind's resource, so
// its tables are the kinds' printer columns and every kubectl output
// format works.
package t9kcli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/accelstack/accelstack/pkg/t9kconfig"
	"github.com/accelstack/accelstack/pkg/version"
)

// options are what every command shares: the streams, the connection
// flags and the project.
type options struct {
	streams genericiooptions.IOStreams
	kube    *genericclioptions.ConfigFlags
	// conn reaches the cluster: through a T9k context, or as kubectl.
	conn *t9kconfig.Connection
	// project is -p/--project, which wins over -n/--namespace.
	project string
	factory cmdutil.Factory
}

// NewRoot returns the t9k command with every subcommand, writing to
// streams.
func NewRoot(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{streams: streams, kube: genericclioptions.NewConfigFlags(true)}
	o.conn = &t9kconfig.Connection{ConfigFlags: o.kube}
	o.factory = cmdutil.NewFactory(cmdutil.NewMatchVersionFlags(o.conn))
	root := &cobra.Command{
		Use:   "t9k",
		Short: "t9k manages the platform's jobs, notebooks, services, workflows, projects and queues",
		Long: "t9k manages the platform's jobs, notebooks, services, workflows, projects and queues.\n\n" +
			"It connects through the platform's gateway with a context of the T9k config (t9k config auth),\n" +
			"or as kubectl does (a kubeconfig, --context, --server, --token, ...); -p/--project names the\n" +
			"project, and -n/--namespace is its alias for kubectl users.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(*cobra.Command, []string) {
			if o.project != "" {
				*o.kube.Namespace = o.project
			}
		},
	}
	root.Version = version.Get().String()
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError(c, "%v", err) })
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	o.addFlags(root.PersistentFlags())
	for _, k := range kinds {
		root.AddCommand(o.kindCommand(k))
	}
	deleteRelease := o.deleteReleaseCommand()
	deleteRelease.Hidden = true // t9k mls delete-release, also where the manual shows it
	root.AddCommand(o.createCommand(), o.deleteFilesCommand(), deleteRelease, o.configCommand(), versionCommand(streams))
	root.CompletionOptions.HiddenDefaultCmd = false
	return root
}

// addFlags adds kubectl's connection flags, --context also as -x, and
// -p/--project.
func (o *options) addFlags(fs *pflag.FlagSet) {
	context := o.kube.Context
	o.kube.Context = nil
	o.kube.AddFlags(fs)
	o.kube.Context = context
	fs.StringVarP(o.kube.Context, "context", "x", "", "The name of the T9k config's or the kubeconfig's context to use")
	fs.StringVarP(&o.conn.ConfigPath, "config", "c", "", "The T9k config file (default $"+t9kconfig.EnvVar+" or ~/.t9k/t9k-config.yaml)")
	fs.StringVarP(&o.project, "project", "p", "", "The project (namespace); wins over --namespace")
}

// clients returns the typed and dynamic clients of the connection flags.
func (o *options) clients() (kubernetes.Interface, dynamic.Interface, error) {
	cfg, err := o.factory.ToRESTConfig()
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("creating a client: %w", err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("creating a client: %w", err)
	}
	return cs, dc, nil
}

// namespace is the project the command acts in. It reads -p itself:
// completions run no PersistentPreRun.
func (o *options) namespace() (string, error) {
	if o.project != "" {
		return o.project, nil
	}
	ns, _, err := o.factory.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the project: %w", err)
	}
	return ns, nil
}

// kindCommand returns the command of kind k with get and k's verbs.
func (o *options) kindCommand(k kind) *cobra.Command {
	cmd := &cobra.Command{
		Use:     k.name,
		Aliases: []string{k.alias},
		Short:   fmt.Sprintf("Manage %ss", k.display),
	}
	cmd.AddCommand(o.getCommand(k))
	switch k.name {
	case "mlservice":
		cmd.AddCommand(o.setCanaryCommand(), o.deleteReleaseCommand())
	case "workflowtemplate":
		cmd.AddCommand(o.startCommand())
	case "simplemlservice":
		cmd.AddCommand(o.createSimpleCommand())
	case "project":
		cmd.AddCommand(o.createProjectCommand())
	case "queue":
		cmd.AddCommand(o.queueGrantCommands()...)
	}
	for _, verb := range k.verbs {
		switch verb {
		case verbDescribe:
			cmd.AddCommand(o.describeCommand(k))
		case verbDelete:
			cmd.AddCommand(o.deleteCommand(k))
		case verbLogs:
			cmd.AddCommand(o.logsCommand(k))
		case verbWait:
			cmd.AddCommand(o.waitCommand(k))
		case verbOpen:
			cmd.AddCommand(o.queueStateCommand(verbOpen, false))
		case verbClose:
			cmd.AddCommand(o.queueStateCommand(verbClose, true))
		}
	}
	return cmd
}
