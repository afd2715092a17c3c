package mlservice

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestRenderArgs checks the forms runtimes are written with: the seed's
// {{if .MODEL_PATH}}{{.MODEL_PATH}}{{else}}all{{end}}, plain variables
// (unset ones empty), spaces inside the braces, nested ifs, and text that
// merely looks like a template or a Kubernetes $(VAR) left as it is.
func TestRenderArgs(t *testing.T) {
	const seedArg = "--models {{if .MODEL_PATH}}{{.MODEL_PATH}}{{else}}all{{end}}"
	for _, tc := range []struct {
		name   string
		arg    string
		params map[string]string
		want   string
	}{
		{"seed with MODEL_PATH", seedArg, map[string]string{"MODEL_PATH": "mnist=model.mar"}, "--models mnist=model.mar"},
		{"seed without MODEL_PATH", seedArg, nil, "--models all"},
		{"seed with an empty MODEL_PATH", seedArg, map[string]string{"MODEL_PATH": ""}, "--models all"},
		{"variable", "--batch={{.BATCH}}", map[string]string{"BATCH": "8"}, "--batch=8"},
		{"unset variable", "--batch={{.BATCH}}", nil, "--batch="},
		{"spaces", "{{ if .A }}{{ .A }}{{ else }}none{{ end }}", map[string]string{"A": "x"}, "x"},
		{"if without else", "a{{if .A}}-{{.A}}{{end}}b", map[string]string{"A": "1"}, "a-1b"},
		{"if without else, unset", "a{{if .A}}-{{.A}}{{end}}b", nil, "ab"},
		{"nested", "{{if .A}}{{if .B}}ab{{else}}a{{end}}{{else}}{{if .B}}b{{else}}-{{end}}{{end}}", map[string]string{"B": "1"}, "b"},
		{"underscores and digits", "{{.MODEL_2_PATH}}", map[string]string{"MODEL_2_PATH": "p"}, "p"},
		{"plain", "--port=8080", nil, "--port=8080"},
		{"JSON", `--config={"a":{"b":1}}`, nil, `--config={"a":{"b":1}}`},
		{"Kubernetes variable", "--path=$(MODEL_DIR)/{{.M}}", map[string]string{"M": "m"}, "--path=$(MODEL_DIR)/m"},
		{"value with braces", "{{.A}}", map[string]string{"A": "{{range 9}}x{{end}}"}, "{{range 9}}x{{end}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Args: []string{tc.arg}}}}
			if err := renderArgs(&spec, tc.params); err != nil {
				t.Fatal(err)
			}
			if got := spec.Containers[0].Args[0]; got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRenderArgsRefused checks that every action other than a variable,
// if, else and end is refused with ReasonInvalidArgs before anything is
// executed, among them a range that would write 10 GB.
func TestRenderArgsRefused(t *testing.T) {
	for _, tc := range []struct{ name, arg string }{
		{"range of 10 GB", "{{range 1000000000}}xxxxxxxxxx{{end}}"},
		{"range of 200 MB", "{{range 20000000}}xxxxxxxxxx{{end}}"},
		{"printf", `{{printf "%0999999d" 1}}`},
		{"template", `{{define "a"}}x{{end}}{{template "a"}}`},
		{"declaration", "{{$x := .A}}{{$x}}"},
		{"field of a field", "{{.A.B}}"},
		{"with", "{{with .A}}x{{end}}"},
		{"if of a call", "{{if eq .A \"1\"}}x{{end}}"},
		{"comment", "{{/* c */}}"},
		{"trim marker", "{{- .A}}"},
		{"bare dot", "{{.}}"},
		{"unclosed action", "{{.X"},
		{"unclosed if", "{{if .X}}x"},
		{"end without if", "x{{end}}"},
		{"else without if", "x{{else}}y"},
		{"two elses", "{{if .X}}a{{else}}b{{else}}c{{end}}"},
		{"deep nesting", strings.Repeat("{{if .X}}", maxIfDepth+1) + strings.Repeat("{{end}}", maxIfDepth+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Args: []string{"ok", tc.arg}}}}
			err := renderArgs(&spec, map[string]string{"A": "1", "X": "1"})
			if err == nil {
				t.Fatalf("accepted; args[1] is %d bytes", len(spec.Containers[0].Args[1]))
			}
			if got := argsReason(err); got != ReasonInvalidArgs {
				t.Errorf("reason %q, want %q (error %v)", got, ReasonInvalidArgs, err)
			}
			if !strings.Contains(err.Error(), "container c args[1]") {
				t.Errorf("error %q does not name the arg", err)
			}
		})
	}
}

// TestRenderArgsBounded checks the output bounds per arg, per container
// and per pod, that a result at a bound is accepted, and that an arg which
// would expand to 1 GiB is refused with ReasonArgsTooLong after
// allocating little.
func TestRenderArgsBounded(t *testing.T) {
	kib := strings.Repeat("x", 1<<10)
	params := map[string]string{"K": kib, "M": strings.Repeat(kib, 1<<10)}
	repeat := func(s string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		containers [][]string
		ok         bool
	}{
		{"arg at the bound", [][]string{{strings.Repeat("{{.K}}", MaxArgBytes>>10)}}, true},
		{"arg over the bound", [][]string{{strings.Repeat("{{.K}}", MaxArgBytes>>10) + "x"}}, false},
		{"literal arg over the bound", [][]string{{strings.Repeat("x", MaxArgBytes+1)}}, false},
		{"1 GiB arg", [][]string{{strings.Repeat("{{.M}}", 1<<10)}}, false},
		{"container at the bound", [][]string{repeat(strings.Repeat("{{.K}}", 64), MaxContainerArgsBytes>>16)}, true},
		{"container over the bound", [][]string{append(repeat(strings.Repeat("{{.K}}", 64), MaxContainerArgsBytes>>16), "x")}, false},
		{"pod at the bound", repeatArgs(repeat(strings.Repeat("{{.K}}", 128), 2), MaxPodArgsBytes>>18), true},
		{"pod over the bound", append(repeatArgs(repeat(strings.Repeat("{{.K}}", 128), 2), MaxPodArgsBytes>>18), []string{"x"}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := corev1.PodSpec{}
			for _, args := range tc.containers {
				spec.Containers = append(spec.Containers, corev1.Container{Name: "c", Args: append([]string(nil), args...)})
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := renderArgs(&spec, params)
			runtime.ReadMemStats(&after)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if got := argsReason(err); got != ReasonArgsTooLong {
				t.Fatalf("reason %q, want %q (error %v)", got, ReasonArgsTooLong, err)
			}
			// The output is cut at the bound: what is allocated is bounded by
			// MaxArgBytes and the builder's doubling, not by the expansion.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
				t.Errorf("refusing allocated %d bytes", alloc)
			}
		})
	}
}

// repeatArgs returns n containers' args, each args.
func repeatArgs(args []string, n int) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = args
	}
	return out
}

// TestArgsReason checks that only the errors of renderArgs have a reason.
func TestArgsReason(t *testing.T) {
	if got := argsReason(errors.New("other")); got != "" {
		t.Errorf("reason of another error %q", got)
	}
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Args: []string{"{{range 3}}x{{end}}"}}}}
	if diff := cmp.Diff(ReasonInvalidArgs, argsReason(renderArgs(&spec, nil))); diff != "" {
		t.Error(diff)
	}
}
