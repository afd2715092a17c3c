package mlservice

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	corev1 "k8s.io/api/core/v1"
)

// ModelPathKey is the variable holding the model's path, set by the
// release's parameters.
const ModelPathKey = "MODEL_PATH"

// Bounds of the rendered args. A process cannot be started with an
// argument longer than the kernel's MAX_ARG_STRLEN (128 KiB on Linux), so
// no runtime needs a longer one; the bounds per container and per pod
// keep what one release makes the controller hold well under the object
// size limit of the API server (1.5 MiB).
const (
	// MaxArgBytes bounds one rendered arg.
	MaxArgBytes = 128 << 10
	// MaxContainerArgsBytes bounds the rendered args of one container.
	MaxContainerArgsBytes = 256 << 10
	// MaxPodArgsBytes bounds the rendered args of all containers of a pod.
	MaxPodArgsBytes = 1 << 20
	// maxIfDepth bounds the nesting of {{if}} actions.
	maxIfDepth = 8
)

// Reasons of an arg that cannot be rendered.
const (
	// ReasonInvalidArgs: an arg holds an action other than {{.NAME}},
	// {{if .NAME}}, {{else}} and {{end}}, or one that is not closed.
	ReasonInvalidArgs = "InvalidArgs"
	// ReasonArgsTooLong: the rendered args exceed a bound.
	ReasonArgsTooLong = "ArgsTooLong"
)

// Errors of renderArgs, for errors.Is.
var (
	errInvalidArgs = errors.New("invalid arg")
	errArgsTooLong = errors.New("args too long")
	// errTooLong is errArgsTooLong with the bounds.
	errTooLong = fmt.Errorf("%w: the rendered args exceed %d bytes in an arg, %d in a container or %d in a pod",
		errArgsTooLong, MaxArgBytes, MaxContainerArgsBytes, MaxPodArgsBytes)
)

// argsReason returns the reason of an error of renderArgs, "" for other
// errors.
func argsReason(err error) string {
	switch {
	case errors.Is(err, errArgsTooLong):
		return ReasonArgsTooLong
	case errors.Is(err, errInvalidArgs):
		return ReasonInvalidArgs
	}
	return ""
}

// renderArgs substitutes the variables in the args of every container of
// spec: {{.NAME}} becomes the value of the parameter NAME (empty when it is
// not set), {{if .NAME}}A{{else}}B{{end}} becomes A when NAME is not empty
// and B otherwise ({{else}} optional, ifs nest). Spaces are allowed inside
// the braces. Nothing else is executed: any other action is refused, and
// the output is bounded by MaxArgBytes, MaxContainerArgsBytes and
// MaxPodArgsBytes, checked as it is written.
func renderArgs(spec *corev1.PodSpec, params map[string]string) error {
	pod := 0
	for i := range spec.Containers {
		c := &spec.Containers[i]
		container := 0
		for j, arg := range c.Args {
			limit := min(MaxArgBytes, MaxContainerArgsBytes-container, MaxPodArgsBytes-pod)
			out, err := renderArg(arg, params, limit)
			if err != nil {
				return fmt.Errorf("container %s args[%d]: %w", c.Name, j, err)
			}
			container += len(out)
			pod += len(out)
			c.Args[j] = out
		}
	}
	return nil
}

// renderArg renders one arg, failing once the output would exceed limit
// bytes.
func renderArg(arg string, params map[string]string, limit int) (string, error) {
	if !strings.Contains(arg, "{{") {
		if len(arg) > limit {
			return "", errTooLong
		}
		return arg, nil
	}
	w := boundedWriter{limit: limit}
	// emit[i] says whether the text inside the i-th open {{if}} is
	// written; elsed[i] whether its {{else}} was seen.
	var emit, elsed []bool
	writing := func() bool {
		for _, e := range emit {
			if !e {
				return false
			}
		}
		return true
	}
	rest := arg
	for rest != "" {
		open := strings.Index(rest, "{{")
		if open < 0 {
			open = len(rest)
		}
		if writing() && !w.write(rest[:open]) {
			return "", errTooLong
		}
		if open == len(rest) {
			break
		}
		rest = rest[open+2:]
		end := strings.Index(rest, "}}")
		if end < 0 {
			return "", fmt.Errorf("%w: {{ without a closing }}", errInvalidArgs)
		}
		action := strings.TrimSpace(rest[:end])
		rest = rest[end+2:]
		switch word, operand, _ := strings.Cut(action, " "); {
		case action == "else":
			if len(emit) == 0 || elsed[len(elsed)-1] {
				return "", fmt.Errorf("%w: {{else}} outside an {{if}}", errInvalidArgs)
			}
			emit[len(emit)-1] = !emit[len(emit)-1]
			elsed[len(elsed)-1] = true
		case action == "end":
			if len(emit) == 0 {
				return "", fmt.Errorf("%w: {{end}} without an {{if}}", errInvalidArgs)
			}
			emit, elsed = emit[:len(emit)-1], elsed[:len(elsed)-1]
		case word == "if":
			name, err := variable(strings.TrimSpace(operand))
			if err != nil {
				return "", err
			}
			if len(emit) == maxIfDepth {
				return "", fmt.Errorf("%w: more than %d nested {{if}}", errInvalidArgs, maxIfDepth)
			}
			emit, elsed = append(emit, params[name] != ""), append(elsed, false)
		default:
			name, err := variable(action)
			if err != nil {
				return "", err
			}
			if writing() && !w.write(params[name]) {
				return "", errTooLong
			}
		}
	}
	if len(emit) > 0 {
		return "", fmt.Errorf("%w: {{if}} without an {{end}}", errInvalidArgs)
	}
	return w.String(), nil
}

// variable returns NAME of the action .NAME, NAME being letters, digits
// and underscores.
func variable(action string) (string, error) {
	name, ok := strings.CutPrefix(action, ".")
	valid := ok && name != ""
	for _, r := range name {
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			valid = false
		}
	}
	if !valid {
		return "", fmt.Errorf("%w: {{%s}} is none of {{.NAME}}, {{if .NAME}}, {{else}}, {{end}}", errInvalidArgs, truncate(action, 64))
	}
	return name, nil
}

// truncate returns s cut to at most n bytes, marked with "..." when cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// boundedWriter collects at most limit bytes.
type boundedWriter struct {
	strings.Builder
	limit int
}

// write appends s and reports whether the output is still within the
// limit; nothing is appended when it would not be.
func (w *boundedWriter) write(s string) bool {
	if w.Len()+len(s) > w.limit {
		return false
	}
	w.WriteString(s)
	return true
}
