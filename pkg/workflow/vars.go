package workflow

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// variableRE matches a variable reference $(<name>), where the name is made
// of the characters of param, workspace, result and node names and dots.
var variableRE = regexp.MustCompile(`\$\(([A-Za-z0-9_.-]+)\)`)

// Variables are the values of a run's variables, by name without the $():
// "params.x", "workspaces.x.path", "results.x.path",
// "templates.<node>.results.<r>".
type Variables map[string]string

// Replace substitutes the variables in s; references to unknown variables
// are left as they are.
func (v Variables) Replace(s string) string {
	if !strings.Contains(s, "$(") {
		return s
	}
	return variableRE.ReplaceAllStringFunc(s, func(ref string) string {
		if val, ok := v[ref[2:len(ref)-1]]; ok {
			return val
		}
		return ref
	})
}

// ReplaceAll substitutes the variables in every string of the JSON form of
// obj, keys aside, and writes the result back into obj. Values never become
// structure: each lands inside one string of the object.
func (v Variables) ReplaceAll(obj any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encoding for substitution: %w", err)
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return fmt.Errorf("decoding for substitution: %w", err)
	}
	tree = v.replaceTree(tree)
	if b, err = json.Marshal(tree); err != nil {
		return fmt.Errorf("encoding substituted: %w", err)
	}
	if err := json.Unmarshal(b, obj); err != nil {
		return fmt.Errorf("decoding substituted: %w", err)
	}
	return nil
}

// replaceTree substitutes the variables in every string of a decoded JSON
// or YAML tree (maps, slices, strings) and returns it.
func (v Variables) replaceTree(t any) any {
	switch t := t.(type) {
	case string:
		return v.Replace(t)
	case map[string]any:
		for k, e := range t {
			t[k] = v.replaceTree(e)
		}
	case []any:
		for i, e := range t {
			t[i] = v.replaceTree(e)
		}
	}
	return t
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
