// Package t9kpf is t9k-pf, the platform's port-forward: it opens a local
// port that reaches a Notebook's SSH server, a pod's port or a Service's,
// through the platform's gateway with the T9k config's credential (an API
// key or a login token), or through the API server with a kubeconfig. It
// is the Kubernetes port-forward (pods/portforward, over WebSocket or
// SPDY), so it needs no other server, and it reconnects when the pod is
// restarted or the connection drops.
package t9kpf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/accelstack/accelstack/pkg/t9kconfig"
	"github.com/accelstack/accelstack/pkg/version"
)

// options are the flags every command shares.
type options struct {
	streams genericiooptions.IOStreams
	conn    *t9kconfig.Connection
	// askKey is -k/--apikey: ask for an API key to use this once.
	askKey      bool
	address     string
	retryMax    int
	retryPeriod int
}

// NewRoot returns the t9k-pf command, writing to streams.
func NewRoot(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{streams: streams, conn: &t9kconfig.Connection{ConfigFlags: genericclioptions.NewConfigFlags(true)}}
	root := &cobra.Command{
		Use:   "t9k-pf",
		Short: "t9k-pf forwards a local port to a Notebook's SSH server, a pod or a Service",
		Long: "t9k-pf forwards a local port to a Notebook's SSH server, a pod's port or a Service's port,\n" +
			"through the platform's gateway with the T9k config's current context (an API key is preferred\n" +
			"over a token), or through the API server with a kubeconfig, as kubectl port-forward.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if !o.askKey {
				return nil
			}
			key, err := t9kconfig.NewPrompter(streams.In, streams.Out).Secret("Please enter your API Key: ")
			o.conn.APIKey = key
			return err
		},
	}
	root.Version = version.Get().String()
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	fs := root.PersistentFlags()
	o.conn.AddFlags(fs)
	fs.StringVarP(&o.conn.ConfigPath, "config", "c", "", "The T9k config file (default $"+t9kconfig.EnvVar+" or ~/.t9k/t9k-config.yaml)")
	fs.BoolVarP(&o.askKey, "apikey", "k", false, "Ask for an API key and use it instead of the context's credential")
	fs.StringVar(&o.address, "address", "localhost", "The local address to listen on (localhost listens on 127.0.0.1 and ::1)")
	fs.IntVar(&o.retryMax, "retryMaxTimes", 10, "How many times to reconnect after the connection ends")
	fs.IntVar(&o.retryPeriod, "retryPeriod", 10, "Seconds between reconnections")
	root.AddCommand(o.notebookCommand(), o.podCommand(), o.serviceCommand(), &cobra.Command{
		Use: "version", Short: "Print the version of t9k-pf", Args: cobra.NoArgs,
		Run: func(*cobra.Command, []string) { fmt.Fprintln(streams.Out, version.Get().String()) },
	})
	return root
}

// ExitBadUsage is the exit code of a command line t9k-pf cannot run, as
// kubectl's; any other failure is 1.
const ExitBadUsage = 2

// usageError is a command line t9k-pf cannot run.
type usageError struct{ error }

// ExitCode is the exit code of err from a command.
func ExitCode(err error) int {
	if errors.As(err, new(usageError)) {
		return ExitBadUsage
	}
	return 1
}

// target is a pod's port to forward to.
type target struct {
	namespace, pod string
	port           int
}

// resolver finds the target again before each connection: a Notebook's or
// a Service's pod may be another one after a restart.
type resolver func(ctx context.Context, cs kubernetes.Interface) (target, error)

// ports parses [<localPort>:]<targetPort>; a missing local port is 0, a
// free one.
func ports(arg string) (local, remote int, err error) {
	l, r, found := strings.Cut(arg, ":")
	if !found {
		l, r = "0", arg
	}
	if local, err = parsePort(l, true); err != nil {
		return 0, 0, fmt.Errorf("the local port %q: %w", l, err)
	}
	if remote, err = parsePort(r, false); err != nil {
		return 0, 0, fmt.Errorf("the target port %q: %w", r, err)
	}
	return local, remote, nil
}

// parsePort parses a port number, 0 only when zero is allowed.
func parsePort(s string, zero bool) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 65535 || (n == 0 && !zero) {
		return 0, errors.New("not a port number (1 to 65535)")
	}
	return n, nil
}

// forward forwards local to the target until ctx ends, resolving the
// target and reconnecting after the connection ends, up to --retryMaxTimes
// times.
func (o *options) forward(ctx context.Context, local int, resolve resolver) error {
	cfg, err := o.conn.ToRESTConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	for attempt := 0; ; attempt++ {
		t, err := resolve(ctx, cs)
		if err == nil {
			var served bool
			local, served, err = o.forwardOnce(ctx, cfg, cs, t, local)
			if served {
				attempt = 0 // a forward that served counts from the start again
			}
		}
		if ctx.Err() != nil {
			return nil //nolint:nilerr // the user ended it (Ctrl-C): no failure
		}
		if attempt >= o.retryMax {
			return err
		}
		fmt.Fprintf(o.streams.ErrOut, "The forward ended (%v); reconnecting in %ds (%d of %d)\n", err, o.retryPeriod, attempt+1, o.retryMax)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Duration(o.retryPeriod) * time.Second):
		}
	}
}

// forwardOnce forwards local to t until the connection ends or ctx does,
// and returns the local port it listened on and whether it got to listen.
func (o *options) forwardOnce(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, t target, local int) (int, bool, error) {
	url := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(t.namespace).Name(t.pod).SubResource("portforward").URL()
	rt, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return local, false, fmt.Errorf("the port-forward's transport: %w", err)
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, url)
	// As kubectl: WebSocket first, SPDY when the server cannot upgrade.
	if ws, err := portforward.NewSPDYOverWebsocketDialer(url, cfg); err == nil {
		dialer = portforward.NewFallbackDialer(ws, dialer, func(err error) bool {
			return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		})
	}
	stop, ready := make(chan struct{}), make(chan struct{})
	go func() {
		<-ctx.Done()
		close(stop)
	}()
	addresses := []string{o.address}
	fw, err := portforward.NewOnAddresses(dialer, addresses, []string{fmt.Sprintf("%d:%d", local, t.port)}, stop, ready, io.Discard, o.streams.ErrOut)
	if err != nil {
		return local, false, fmt.Errorf("forwarding: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- fw.ForwardPorts() }()
	select {
	case err := <-done:
		return local, false, portError(err, t)
	case <-ready:
	}
	if got, err := fw.GetPorts(); err == nil && len(got) == 1 {
		local = int(got[0].Local)
	}
	host := o.address
	if host == "localhost" {
		host = "127.0.0.1"
	}
	fmt.Fprintf(o.streams.Out, "now you can forward to your target by %s:%d\n", host, local)
	return local, true, portError(<-done, t)
}

// portError names the target in a forward's error.
func portError(err error, t target) error {
	if err == nil {
		return errors.New("the connection closed")
	}
	return fmt.Errorf("forwarding to pod %s/%s port %d: %w", t.namespace, t.pod, t.port, err)
}

// namespace returns the project of -n, or the kubeconfig's, or default.
func (o *options) namespace() (string, error) {
	ns, _, err := o.conn.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the project: %w", err)
	}
	return ns, nil
}
