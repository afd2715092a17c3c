// Command hydra is Ory Hydra's command line, built from this module so
// that Hydra's own replace directives, which keep go install from building
// it, are repeated in go.mod here.
package main

import "github.com/ory/hydra/v2/cmd"

func main() { cmd.Execute() }
