package t9kcli

import (
	"bytes"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

var update = flag.Bool("update", false, "rewrite the command reference in docs/cli.md and the golden files of testdata")

// The markers around the generated reference in docs/cli.md.
const (
	beginReference = "<!-- begin reference: go test ./pkg/t9kcli -run TestReference -update -->\n"
	endReference   = "<!-- end reference -->\n"
)

// TestReference: docs/cli.md holds the reference of the command tree as
// it is; -update rewrites it.
func TestReference(t *testing.T) {
	const path = "../../docs/cli.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := bytes.Index(doc, []byte(beginReference)), bytes.Index(doc, []byte(endReference))
	if begin < 0 || end < begin {
		t.Fatalf("docs/cli.md has no %q ... %q block", beginReference, endReference)
	}
	want := Reference(NewRoot(genericiooptions.NewTestIOStreamsDiscard()))
	got := string(doc[begin+len(beginReference) : end])
	if got == want {
		return
	}
	if *update {
		out := string(doc[:begin+len(beginReference)]) + want + string(doc[end:])
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/cli.md's reference is not the command tree's; run go test ./pkg/t9kcli -run TestReference -update\n%s", firstDiff(got, want))
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n  docs: " + gl + "\n  tree: " + wl
		}
	}
	return ""
}
