// Package cli parses the command lines of the accelstack binaries the same way
// everywhere: standard flags with environment-variable fallbacks (command line
// over environment over default), --help and --version, and klog's verbosity
// flags. Main runs a binary's body with a context that ends on SIGINT or
// SIGTERM and is the only place that exits the process.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/version"
)

// Exit codes used by Main.
const (
	ExitOK       = 0
	ExitFailure  = 1
	ExitBadUsage = 2
)

// errVersion is returned by Parse when --version was given.
var errVersion = errors.New("version requested")

// FlagSet is a flag.FlagSet that also reads unset flags from environment
// variables and knows how to print the binary's help.
type FlagSet struct {
	*flag.FlagSet
	summary     string
	env         map[string]string // flag name -> environment variable
	checks      []func() error
	showVersion bool
}

// NewFlagSet returns a FlagSet for the binary name with a one-line summary
// shown at the top of --help. It registers --version, -v and --vmodule.
func NewFlagSet(name, summary string) *FlagSet {
	fs := &FlagSet{
		FlagSet: flag.NewFlagSet(name, flag.ContinueOnError),
		summary: summary,
		env:     map[string]string{},
	}
	fs.BoolVar(&fs.showVersion, "version", false, "Print the version and exit.")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	for _, name := range []string{"v", "vmodule"} {
		fs.Var(klogFlags.Lookup(name).Value, name, klogFlags.Lookup(name).Usage)
	}
	fs.Usage = func() { fs.PrintHelp(fs.Output()) }
	return fs
}

// Env makes the environment variable envVar the fallback for the flag name.
// It panics if the flag is not defined, which is a programming error.
func (fs *FlagSet) Env(name, envVar string) {
	f := fs.Lookup(name)
	if f == nil {
		panic(fmt.Sprintf("cli: flag %q is not defined", name))
	}
	fs.env[name] = envVar
	f.Usage += " [$" + envVar + "]"
}

// Check registers a validation run after parsing; its error is reported as a
// bad command line (exit 2), so it should name the flag at fault.
func (fs *FlagSet) Check(fn func() error) {
	fs.checks = append(fs.checks, fn)
}

// OneOf returns an error naming the flag unless value is one of allowed.
func OneOf(flagName, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	return fmt.Errorf("invalid value %q for flag --%s: must be one of %s", value, flagName, strings.Join(allowed, ", "))
}

// Hosts returns an error naming the first flag whose value is neither empty
// nor a host name: lower-case DNS labels of letters, digits and '-' joined
// by dots, optionally followed by :<port>. Such values end up in URLs and
// certificates, where anything else is syntax.
func Hosts(flags map[string]string) error {
	names := make([]string, 0, len(flags))
	for n := range flags {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if v := flags[n]; v != "" && !isHost(v) {
			return fmt.Errorf("invalid value %q for flag --%s: must be a lower-case DNS name, optionally with :<port>", v, n)
		}
	}
	return nil
}

// isHost says whether v is a DNS name with an optional port.
func isHost(v string) bool {
	name, port, hasPort := strings.Cut(v, ":")
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return false
		}
	}
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
	}
	return true
}

// Alternatives joins values for help and messages: "a, b or c".
func Alternatives(values ...string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// PrintHelp writes the summary and the flags to w.
func (fs *FlagSet) PrintHelp(w io.Writer) {
	fmt.Fprintf(w, "%s: %s\n\nUsage: %s [flags]\n\nFlags:\n", fs.Name(), fs.summary, fs.Name())
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += fmt.Sprintf(" (default %q)", f.DefValue)
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, usage)
	})
}

// Parse parses args, then fills every flag not given on the command line from
// its environment variable, if set. It returns flag.ErrHelp for --help and an
// error naming the flag or variable for a bad value.
func (fs *FlagSet) Parse(args []string) error {
	fs.SetOutput(io.Discard) // Main prints errors and help itself.
	if err := fs.FlagSet.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if fs.showVersion {
		return errVersion
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	names := make([]string, 0, len(fs.env))
	for name := range fs.env {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		val, ok := os.LookupEnv(fs.env[name])
		if set[name] || !ok {
			continue
		}
		if err := fs.Set(name, val); err != nil {
			return fmt.Errorf("invalid value %q for $%s (flag --%s): %w", val, fs.env[name], name, err)
		}
	}
	for _, check := range fs.checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// Main parses the command line with fs and runs body with a context that is
// cancelled on SIGINT or SIGTERM. It exits 0 after --help or --version, 2 with
// a one-line message on a bad command line, and 1 when body fails.
func Main(fs *FlagSet, body func(ctx context.Context) error) {
	os.Exit(run(fs, os.Args[1:], os.Stdout, os.Stderr, body))
}

// run is Main without the process exit, for tests.
func run(fs *FlagSet, args []string, stdout, stderr io.Writer, body func(ctx context.Context) error) int {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.PrintHelp(stdout)
		return ExitOK
	case errors.Is(err, errVersion):
		fmt.Fprintf(stdout, "%s %s\n", fs.Name(), version.Get())
		return ExitOK
	case err != nil:
		fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", fs.Name(), strings.TrimSpace(err.Error()), fs.Name())
		return ExitBadUsage
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	klog.InfoS("Starting", "binary", fs.Name(), "version", version.Get().GitVersion)
	if err := body(ctx); err != nil {
		klog.ErrorS(err, "Exiting with error", "binary", fs.Name())
		klog.Flush()
		return ExitFailure
	}
	klog.Flush()
	return ExitOK
}
