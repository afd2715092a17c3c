// Command workflow-events runs the servers of the event-driven workflows,
// as the EventListener and WorkflowTrigger controllers deploy them:
//
//	workflow-events listen   the HTTP server of an EventListener: JSON POSTs
//	                         become CloudEvents for its WorkflowTriggers
//	workflow-events trigger  the CloudEvents receiver of a WorkflowTrigger:
//	                         events that pass its filters start WorkflowRuns
//
// See package server.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/eventlistener/server"
	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
	"github.com/accelstack/accelstack/pkg/version"
)

const usage = `workflow-events: the EventListener and WorkflowTrigger servers

Usage: workflow-events listen|trigger [flags]

Commands:
  listen   the HTTP server of an EventListener
  trigger  the CloudEvents receiver of a WorkflowTrigger

Run 'workflow-events <command> --help' for the flags of a command.
`

func main() {
	cmd := ""
	if len(os.Args) > 1 {
		cmd = os.Args[1]
	}
	switch cmd {
	case "listen", "trigger":
		// cli.Main parses os.Args[1:]: the command's flags.
		os.Args = os.Args[1:]
		if cmd == "listen" {
			listen()
		}
		trigger()
	case "-h", "--help", "help":
		fmt.Print(usage)
	case "-version", "--version", "version":
		fmt.Println("workflow-events", version.Get())
	default:
		if strings.HasPrefix(cmd, "-") {
			fmt.Fprintf(os.Stderr, "workflow-events: flag provided but not defined: -%s\n", strings.TrimLeft(cmd, "-"))
			os.Exit(cli.ExitBadUsage)
		}
		fmt.Fprint(os.Stderr, usage)
		os.Exit(cli.ExitBadUsage)
	}
}

// addr is the flag of the servers' address.
func addr(fs *cli.FlagSet) *string {
	return fs.String("address", fmt.Sprintf(":%d", serverconfig.Port), "Address to serve on.")
}

func listen() {
	fs := cli.NewFlagSet("workflow-events listen", "the HTTP server of an EventListener")
	address := addr(fs)
	cfg := server.DefaultListenerConfig()
	fs.StringVar(&cfg.Namespace, "namespace", "", "Namespace of the EventListener.")
	fs.StringVar(&cfg.Name, "name", "", "Name of the EventListener.")
	fs.Func("subscribers", "Comma-separated URLs of the WorkflowTriggers every event goes to.", func(v string) error {
		cfg.Subscribers = nil
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				cfg.Subscribers = append(cfg.Subscribers, s)
			}
		}
		return nil
	})
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body-bytes", cfg.MaxBodyBytes, "Largest request body; a larger one gets 413.")
	fs.Float64Var(&cfg.Rate, "rate", cfg.Rate, "Requests a second taken on average; more get 429.")
	fs.IntVar(&cfg.Burst, "burst", cfg.Burst, "Requests taken at once above the rate.")
	fs.DurationVar(&cfg.SendTimeout, "send-timeout", cfg.SendTimeout, "Limit of one attempt to deliver an event to a subscriber.")
	fs.DurationVar(&cfg.RetryBackoff, "retry-backoff", cfg.RetryBackoff, "Wait before the second attempt to deliver an event, doubling with each attempt up to 30s.")
	fs.DurationVar(&cfg.DeliveryDeadline, "delivery-deadline", cfg.DeliveryDeadline, "How long an accepted event is retried before it is dropped.")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", cfg.MaxInFlight, "Events being delivered at most; more requests get 503.")
	fs.Int64Var(&cfg.MaxSpoolBytes, "max-spool-bytes", cfg.MaxSpoolBytes, "Bytes of the events being delivered at most; more requests get 503.")
	fs.Env("namespace", serverconfig.EnvListenerNamespace)
	fs.Env("name", serverconfig.EnvListenerName)
	fs.Env("subscribers", serverconfig.EnvSubscribers)
	fs.StringVar(&cfg.SecretFile, "secret-file", "", "File holding the shared secret requests must be signed with (GitHub X-Hub-Signature-256 or GitLab X-Gitlab-Token); empty takes every request.")
	fs.Env("secret-file", serverconfig.EnvSecretFile)
	fs.Check(func() error {
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("invalid flags: %w", err)
		}
		return nil
	})
	cli.Main(fs, func(ctx context.Context) error {
		return server.RunListener(ctx, *address, cfg)
	})
}

func trigger() {
	fs := cli.NewFlagSet("workflow-events trigger", "the CloudEvents receiver of a WorkflowTrigger")
	address := addr(fs)
	var config string
	fs.StringVar(&config, "config", "", "The WorkflowTrigger's namespace, name, event sources and workflowRunSpec, as JSON.")
	maxEventBytes := fs.Int64("max-event-bytes", server.DefaultMaxEventBytes, "Largest event; a larger one is refused.")
	fs.Env("config", serverconfig.EnvTriggerConfig)
	rate := fs.Float64("rate", serverconfig.DefaultTriggerRate, "Runs a second created on average; more events get 429.")
	burst := fs.Int("burst", serverconfig.DefaultTriggerBurst, "Runs created at once above the rate.")
	var cfg serverconfig.TriggerConfig
	fs.Check(func() error {
		var err error
		if cfg, err = serverconfig.ParseTriggerConfig(config); err != nil {
			return fmt.Errorf("invalid value for flag --config: %w", err)
		}
		if *rate <= 0 || *burst < 1 {
			return fmt.Errorf("invalid flags: the rate %g/s, burst %d, lets no run through", *rate, *burst)
		}
		if cfg.Rate == 0 {
			cfg.Rate, cfg.Burst = *rate, *burst
		}
		return nil
	})
	cli.Main(fs, func(ctx context.Context) error {
		// The pod's service account creates the runs.
		restConfig, err := ctrl.GetConfig()
		if err != nil {
			return fmt.Errorf("finding the cluster: %w", err)
		}
		return server.RunTrigger(ctx, *address, cfg, restConfig, *maxEventBytes)
	})
}
