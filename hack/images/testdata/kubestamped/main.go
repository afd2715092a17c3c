// Command kubestamped prints its build version as a Kubernetes component
// such as the scheduler does (k8s.io/component-base/version/verflag):
// --version prints "Kubernetes" and the version, --version=raw the whole
// version.Info.
package main

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/version"
)

// gitVersion and gitCommit are set with -X main.gitVersion=... as the
// scheduler's are in k8s.io/component-base/version.
var (
	gitVersion = "v0.0.0-master+$Format:%H$"
	gitCommit  = "$Format:%H$"
)

func main() {
	info := version.Info{Major: "1", Minor: "2", GitVersion: gitVersion, GitCommit: gitCommit, BuildDate: "1970-01-01T00:00:00Z"}
	switch {
	case len(os.Args) == 2 && os.Args[1] == "--version=raw":
		fmt.Printf("%#v\n", info)
	case len(os.Args) == 2 && os.Args[1] == "--version":
		fmt.Printf("Kubernetes %s\n", info)
	default:
		os.Exit(2)
	}
}
