package workflow

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// variableRE matches a variable reference $(<name>), where the name is made
// of the characters of param, workspace, result and node names and dots.
var variableRE = regexp.MustCompile(`\$\(([A-Za-z0-9_.-]+)\)`)

// Bounds on what substitution produces. A param value is at most
// batchv1beta1.MaxParamValueLength bytes, but a template may refer to it
// any number of times: without these bounds one run could make the
// controller build strings of any size.
const (
	// MaxSubstitutedBytes bounds one string after substitution.
	MaxSubstitutedBytes = 256 << 10
	// MaxSubstitutedObjectBytes bounds the strings with substitutions of
	// one object (a pod spec, a manifest, a job) together.
	MaxSubstitutedObjectBytes = 1 << 20
)

// TooLongError says that substituting a variable would make a string, or
// the substituted strings of an object together, longer than their bound.
// The run fails with it as its reason.
type TooLongError struct {
	// Variable is the variable, without the $(), whose value went over.
	Variable string
	// Field is where the string is, e.g. spec.pod.containers[0].args[1].
	Field string
	// Limit is the bound, in bytes.
	Limit int
	// Object is true when the bound is the one on the whole object.
	Object bool
}

func (e *TooLongError) Error() string {
	if e.Object {
		return fmt.Sprintf("substituting $(%s) in %s makes the substituted strings of the object longer than %d bytes in all",
			e.Variable, e.Field, e.Limit)
	}
	return fmt.Sprintf("substituting $(%s) in %s makes it longer than %d bytes", e.Variable, e.Field, e.Limit)
}

// Variables are the values of a run's variables, by name without the $():
// "params.x", "workspaces.x.path", "results.x.path",
// "templates.<node>.results.<r>".
type Variables map[string]string

// Replace substitutes the variables in s, the value of field; references to
// unknown variables are left as they are. A result longer than
// MaxSubstitutedBytes is a *TooLongError.
func (v Variables) Replace(s, field string) (string, error) {
	return v.budget(MaxSubstitutedObjectBytes).replace(s, field, MaxSubstitutedBytes)
}

// budget returns a substituter of v that produces at most total bytes.
func (v Variables) budget(total int) *substituter {
	return &substituter{vars: v, limit: total, left: total}
}

// substituter substitutes variables in the strings of one object, counting
// the bytes of the strings it produces against the object's bound.
type substituter struct {
	vars Variables
	// limit is the object's bound; left is what remains of it.
	limit, left int
}

// replace substitutes the variables in s, the value of field, into a string
// of at most limit bytes. The length is computed before anything is built,
// so an over-long result costs no memory.
func (sb *substituter) replace(s, field string, limit int) (string, error) {
	if !strings.Contains(s, "$(") {
		return s, nil
	}
	matches := variableRE.FindAllStringSubmatchIndex(s, -1)
	// n is the length of the output up to the end of the last variable
	// substituted, which is the one reported when the output goes over.
	n, last, variable := 0, 0, ""
	over := func() error {
		switch {
		case n > limit:
			return &TooLongError{Variable: variable, Field: field, Limit: limit}
		case n > sb.left:
			return &TooLongError{Variable: variable, Field: field, Limit: sb.limit, Object: true}
		}
		return nil
	}
	for _, m := range matches {
		val, ok := sb.vars[s[m[2]:m[3]]]
		if !ok {
			continue
		}
		n += m[0] - last + len(val)
		last, variable = m[1], s[m[2]:m[3]]
		if err := over(); err != nil {
			return "", err
		}
	}
	if variable == "" {
		return s, nil
	}
	n += len(s) - last
	if err := over(); err != nil {
		return "", err
	}
	sb.left -= n
	var out strings.Builder
	out.Grow(n)
	last = 0
	for _, m := range matches {
		if val, ok := sb.vars[s[m[2]:m[3]]]; ok {
			out.WriteString(s[last:m[0]])
			out.WriteString(val)
			last = m[1]
		}
	}
	out.WriteString(s[last:])
	return out.String(), nil
}

// ReplaceAll substitutes the variables in every string of the JSON form of
// obj, keys aside, and writes the result back into obj; field names obj in
// errors. Values never become structure: each lands inside one string of
// the object. A string longer than MaxSubstitutedBytes, or strings with
// substitutions longer than MaxSubstitutedObjectBytes together, are a
// *TooLongError, and obj is left as it was.
func (v Variables) ReplaceAll(obj any, field string) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encoding for substitution: %w", err)
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return fmt.Errorf("decoding for substitution: %w", err)
	}
	if tree, err = v.budget(MaxSubstitutedObjectBytes).replaceTree(tree, field); err != nil {
		return err
	}
	if b, err = json.Marshal(tree); err != nil {
		return fmt.Errorf("encoding substituted: %w", err)
	}
	if err := json.Unmarshal(b, obj); err != nil {
		return fmt.Errorf("decoding substituted: %w", err)
	}
	return nil
}

// replaceTree substitutes the variables in every string of a decoded JSON
// or YAML tree (maps, slices, strings) at field and returns it. Map keys are
// visited in order, so that the same tree always fails at the same field.
func (sb *substituter) replaceTree(t any, field string) (any, error) {
	switch t := t.(type) {
	case string:
		return sb.replace(t, field, MaxSubstitutedBytes)
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e, err := sb.replaceTree(t[k], field+"."+k)
			if err != nil {
				return nil, err
			}
			t[k] = e
		}
	case []any:
		for i, e := range t {
			e, err := sb.replaceTree(e, field+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			t[i] = e
		}
	}
	return t, nil
}

// References returns the variable names s refers to, without the $().
func References(s string) []string {
	var out []string
	for _, m := range variableRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// ResultReference splits a reference "templates.<node>.results.<r>" into
// the node and the result.
func ResultReference(ref string) (node, result string, ok bool) {
	rest, ok := strings.CutPrefix(ref, "templates.")
	if !ok {
		return "", "", false
	}
	node, result, ok = strings.Cut(rest, ".results.")
	return node, result, ok && node != "" && result != ""
}

// nodeReferences returns the DAG nodes whose results s refers to.
func nodeReferences(s string) []string {
	var out []string
	for _, ref := range References(s) {
		if node, _, ok := ResultReference(ref); ok {
			out = append(out, node)
		}
	}
	return out
}
