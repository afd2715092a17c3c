package datacube

import (
	"fmt"
	"strings"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// MaxNameLength is the longest DataCube name: its Job, <name>-batchjob, must
// fit the 63 characters of the job-name label the Job controller sets.
const MaxNameLength = 63 - len("-batchjob")

// AllowedExtraArgs are the executor flags spec.executor.options.extraArgs may
// pass. Flags that move the PVC containment root or the termination message
// are not among them. The CRD schema refuses other flags too.
var AllowedExtraArgs = []string{"concurrency", "part-size", "connect-timeout", "no-fsync", "sync-allow-empty", "cache-dir", "v"}

// validate checks what the CRD schema may not have: an older CRD, or a
// DataCube stored before the schema refused it.
func validate(dc *tensorstackv1beta1.DataCube) error {
	if len(dc.Name) > MaxNameLength {
		return fmt.Errorf("metadata.name %q is longer than %d characters, too long for its Job name", dc.Name, MaxNameLength)
	}
	return checkExtraArgs(dc.Spec.Executor.Options.ExtraArgs)
}

// checkExtraArgs refuses every flag that is not in AllowedExtraArgs. An
// argument not starting with "-" is a flag's value (the executor refuses a
// stray positional argument).
func checkExtraArgs(args []string) error {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !allowedFlag(name) {
			return fmt.Errorf("spec.executor.options.extraArgs[%d]: flag %q is not allowed; allowed flags: --%s",
				i, "--"+name, strings.Join(AllowedExtraArgs, ", --"))
		}
	}
	return nil
}

func allowedFlag(name string) bool {
	for _, f := range AllowedExtraArgs {
		if name == f {
			return true
		}
	}
	return false
}
