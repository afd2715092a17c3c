// Package filter is what a WorkflowTrigger does with an event from an
// EventListener: the event's JSON document ({"header": ..., "body": ...}),
// the filters that decide whether it starts a run, and the substitution of
// $(body.<path>) and $(header.<name>) in the run's param values. Paths use
// gjson's syntax (github.com/tidwall/gjson): keys separated by dots, array
// indices as keys, '*' and '?' wildcards, '\' escapes.
//
// Nothing here evaluates the event: values are only compared with the
// filters' values and copied, as strings, into params.
package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
)

// The roots of a path: the request's headers and its JSON body.
const (
	HeaderRoot = "header"
	BodyRoot   = "body"
)

// document is the JSON document of an event.
type document struct {
	Header map[string]string `json:"header"`
	Body   json.RawMessage   `json:"body"`
}

// Document returns the JSON document of a request with header and a JSON
// body: {"header": {<name>: <first value>, ...}, "body": <body>}. Header
// names are canonical (X-Github-Event), as net/http gives them. It fails
// when body is not JSON.
func Document(header http.Header, body []byte) ([]byte, error) {
	if !json.Valid(body) {
		return nil, errors.New("the body is not JSON")
	}
	d := document{Header: make(map[string]string, len(header)), Body: body}
	for name, values := range header {
		if len(values) > 0 {
			d.Header[name] = values[0]
		}
	}
	// Not HTML-escaped: a body of '<' would grow sixfold.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("encoding the event document: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Failure says which filter an event failed and why.
type Failure struct {
	// Path is the filter's path.
	Path string
	// Reason says what the value at the path was, without the value.
	Reason string
}

// Match reports whether the document doc passes every filter; when it does
// not, it returns the first filter that failed. A filter passes when the
// value at its path, read as its type, equals one of its values:
//
//   - bool: a JSON true or false, or a string strconv.ParseBool accepts
//     (header values are strings);
//   - number: a JSON number, or a string strconv.ParseFloat accepts,
//     compared as float64;
//   - string: a JSON string, compared as is.
//
// A missing value, a null, or a value of another type fails.
func Match(doc []byte, filters []triggersv1beta1.Filter) (bool, *Failure) {
	for _, f := range filters {
		if reason := check(doc, f); reason != "" {
			return false, &Failure{Path: f.Path, Reason: reason}
		}
	}
	return true, nil
}

// check returns why doc fails f, or "" when it passes.
func check(doc []byte, f triggersv1beta1.Filter) string {
	v := gjson.GetBytes(doc, NormalizePath(f.Path))
	if !v.Exists() || v.Type == gjson.Null {
		return "no value at the path"
	}
	switch f.Type {
	case triggersv1beta1.JSONBool:
		got, ok := asBool(v)
		if !ok {
			return "the value is not a bool"
		}
		if slices.ContainsFunc(f.Values, func(s string) bool { b, err := strconv.ParseBool(s); return err == nil && b == got }) {
			return ""
		}
	case triggersv1beta1.JSONNumber:
		got, ok := asNumber(v)
		if !ok {
			return "the value is not a number"
		}
		if slices.ContainsFunc(f.Values, func(s string) bool { n, err := strconv.ParseFloat(s, 64); return err == nil && n == got }) {
			return ""
		}
	case triggersv1beta1.JSONString:
		if v.Type != gjson.String {
			return "the value is not a string"
		}
		if slices.Contains(f.Values, v.Str) {
			return ""
		}
	default:
		return fmt.Sprintf("unknown filter type %q", f.Type)
	}
	return "the value is none of the filter's values"
}

// asBool reads v as a bool.
func asBool(v gjson.Result) (bool, bool) {
	switch v.Type {
	case gjson.True:
		return true, true
	case gjson.False:
		return false, true
	case gjson.String:
		b, err := strconv.ParseBool(v.Str)
		return b, err == nil
	}
	return false, false
}

// asNumber reads v as a number.
func asNumber(v gjson.Result) (float64, bool) {
	switch v.Type {
	case gjson.Number:
		return v.Num, true
	case gjson.String:
		n, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64)
		return n, err == nil
	}
	return 0, false
}
