// Command workflow-tools makes the steps of a SeqPod pod, one container
// each, run one after another (package sequencer). The pod's init container
// copies it into the pod's tools directory:
//
//	workflow-tools install [DIR]
//
// and each step runs its command through it:
//
//	workflow-tools run --step I --steps N [--result NAME]... [--script FILE] -- COMMAND [ARG]...
//
// It links statically, with the standard library only, so that it runs in
// any image.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/accelstack/accelstack/pkg/version"
	"github.com/accelstack/accelstack/pkg/workflow/seqpod/sequencer"
)

const usage = `Usage: workflow-tools install|run|version

  workflow-tools install [DIR]
      Copy workflow-tools to DIR (default %[1]s), create its state directory
      and write the scripts of the WORKFLOW_TOOLS_SCRIPT_<i> variables.
  workflow-tools run --step I --steps N [flags] -- COMMAND [ARG]...
      Wait for step I-1, run the command (or --script with the args), record
      the step's state; the last or a failed step writes the results to the
      termination message.
  workflow-tools version
`

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, usage, sequencer.ToolsDir)
		return 2
	}
	switch args[0] {
	case "install":
		return install(args[1:], stderr)
	case "run":
		return runStep(args[1:], stderr)
	case "version", "-version", "--version":
		fmt.Fprintln(os.Stdout, "workflow-tools", version.Get())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprintf(stderr, usage, sequencer.ToolsDir)
		return 0
	}
	if strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(stderr, "workflow-tools: flag provided but not defined: -%s\n", strings.TrimLeft(args[0], "-"))
		return 2
	}
	fmt.Fprintf(stderr, "workflow-tools: unknown command %q\n"+usage, args[0], sequencer.ToolsDir)
	return 2
}

func install(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("workflow-tools install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "workflow-tools install: want at most one directory, got %q\n", fs.Args())
		return 2
	}
	dir := sequencer.ToolsDir
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	exe, err := os.Executable()
	if err == nil {
		err = sequencer.Install(dir, exe, os.Environ())
	}
	if err != nil {
		fmt.Fprintf(stderr, "workflow-tools install: %v\n", err)
		return 1
	}
	return 0
}

func runStep(args []string, stderr io.Writer) int {
	var cfg sequencer.Config
	fs := flag.NewFlagSet("workflow-tools run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.Step, "step", -1, "Index of the step, from 0.")
	fs.IntVar(&cfg.Steps, "steps", 0, "Number of steps.")
	fs.StringVar(&cfg.Script, "script", "", "Script to run with the args instead of a command.")
	fs.Func("result", "Name of a declared result; repeated, in order.", func(s string) error {
		if s == "" || strings.ContainsAny(s, "/\x00") || s == "." || s == ".." {
			return errors.New("not a result name")
		}
		cfg.Results = append(cfg.Results, s)
		return nil
	})
	fs.StringVar(&cfg.ToolsDir, "tools-dir", sequencer.ToolsDir, "Tools directory, with the state of the steps.")
	fs.StringVar(&cfg.ResultsDir, "results-dir", sequencer.ResultsDir, "Directory of the result files.")
	fs.StringVar(&cfg.TerminationMessagePath, "termination-message-path", sequencer.TerminationMessagePath, "File the results go to.")
	fs.DurationVar(&cfg.PollInterval, "poll-interval", sequencer.DefaultPollInterval, "How often a waiting step looks at the state.")
	if err := fs.Parse(args); err != nil {
		return sequencer.ExitToolError
	}
	cfg.Command = fs.Args()
	cfg.Log = stderr
	return sequencer.Run(cfg)
}
