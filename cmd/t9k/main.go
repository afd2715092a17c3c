// Command t9k is the platform's command line: get, describe, delete, logs
// and wait for its jobs, notebooks, services, workflows, projects and
// queues. Installed as kubectl-t9k it is also the kubectl plugin
// "kubectl t9k".
package main

import (
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/accelstack/accelstack/pkg/t9kcli"
)

func main() {
	root := t9kcli.NewRoot(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := root.Execute(); err != nil {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, "error:", msg)
		}
		os.Exit(t9kcli.ExitCode(err))
	}
}
