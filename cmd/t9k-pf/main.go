// Command t9k-pf forwards a local port to a Notebook's SSH server, a pod
// or a Service of the platform, through its gateway with the T9k config's
// credential, or through the API server with a kubeconfig.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/accelstack/accelstack/pkg/t9kpf"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := t9kpf.NewRoot(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(t9kpf.ExitCode(err))
	}
}
