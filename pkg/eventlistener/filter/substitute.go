package filter

import (
	"regexp"

	"github.com/tidwall/gjson"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// refPattern matches a reference $(body.<path>) or $(header.<name>...); the
// path holds no parenthesis, so references do not nest.
var refPattern = regexp.MustCompile(`\$\(((?:` + BodyRoot + `|` + HeaderRoot + `)\.[^()]*)\)`)

// Refs returns the paths of the references in s, in order.
func Refs(s string) []string {
	var paths []string
	for _, m := range refPattern.FindAllStringSubmatch(s, -1) {
		paths = append(paths, m[1])
	}
	return paths
}

// Value returns the value at path of the document doc as a string: a JSON
// string's text, the JSON of a number, bool, object or array, and "" for a
// null or a missing value.
func Value(doc []byte, path string) string {
	return gjson.GetBytes(doc, NormalizePath(path)).String()
}

// Substitute returns s with each reference replaced by its Value in doc.
// It makes one pass: a value that holds a reference is not substituted
// again.
func Substitute(doc []byte, s string) string {
	return refPattern.ReplaceAllStringFunc(s, func(ref string) string {
		return Value(doc, refPattern.FindStringSubmatch(ref)[1])
	})
}

// SubstituteParams returns a copy of params with the references in their
// values substituted from doc.
func SubstituteParams(doc []byte, params []batchv1beta1.Param) []batchv1beta1.Param {
	if params == nil {
		return nil
	}
	out := make([]batchv1beta1.Param, len(params))
	for i, p := range params {
		out[i] = batchv1beta1.Param{Name: p.Name, Value: Substitute(doc, p.Value)}
	}
	return out
}
