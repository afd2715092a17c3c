package t9kcli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// Exit codes, as kubectl's: 1 for a failure, 2 for a bad command line.
const (
	ExitFailure  = 1
	ExitBadUsage = 2
)

// errSilent is a failure already reported on the error output.
var errSilent = errors.New("")

// usageErr is a command line the command cannot run.
type usageErr struct{ msg string }

func (e *usageErr) Error() string { return e.msg }

// usageError returns a usage error of cmd, with its usage line.
func usageError(cmd *cobra.Command, format string, args ...any) error {
	return &usageErr{msg: fmt.Sprintf(format, args...) + "\nSee '" + cmd.CommandPath() + " -h' for help and examples"}
}

// ExitCode is the exit code of err from a command.
func ExitCode(err error) int {
	var u *usageErr
	if errors.As(err, &u) {
		return ExitBadUsage
	}
	return ExitFailure
}
