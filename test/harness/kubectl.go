package harness

import (
	"os/exec"
	"strings"
)

// KubectlVersion is the client version of the kubectl binary at path, as
// the bench programs print it beside their figures.
func KubectlVersion(kubectl string) string {
	out, err := exec.Command(kubectl, "version", "--client", "-o", "yaml").Output()
	if err != nil {
		return "(version unknown)"
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "  gitVersion: "); ok {
			return v
		}
	}
	return "(version unknown)"
}
