// Command stamped prints a name and its build version as the accelstack
// binaries' --version does; the tests build it under their names.
package main

import (
	"fmt"

	"github.com/accelstack/accelstack/pkg/version"
)

// name is the binary's name, set with -X main.name=...
var name = "stamped"

func main() {
	fmt.Printf("%s %s\n", name, version.Get())
}
