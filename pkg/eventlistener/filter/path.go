package filter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
)

// NormalizePath returns path with the header name of a header.<name>...
// path in canonical form (x-github-event becomes X-Github-Event), as the
// document holds header names; other paths are returned as they are.
func NormalizePath(path string) string {
	rest, ok := strings.CutPrefix(path, HeaderRoot+".")
	if !ok {
		return path
	}
	b := []byte(rest)
	upper, escaped := true, false
	for i, c := range b {
		if escaped {
			escaped = false
		} else if c == '\\' {
			escaped = true
			continue
		} else if c == '.' || c == '|' {
			break
		}
		// net/textproto.CanonicalMIMEHeaderKey's rule.
		switch {
		case upper && 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !upper && 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
		upper = c == '-'
	}
	return HeaderRoot + "." + string(b)
}

// ValidatePath returns an error unless path is body.<path> or
// header.<name>[.<path>] with a key after the root and no dangling '\'.
func ValidatePath(path string) error {
	var rest string
	if r, ok := strings.CutPrefix(path, BodyRoot+"."); ok {
		rest = r
	} else if r, ok := strings.CutPrefix(path, HeaderRoot+"."); ok {
		rest = r
	} else {
		return fmt.Errorf("must start with %q or %q", BodyRoot+".", HeaderRoot+".")
	}
	if rest == "" || rest[0] == '.' {
		return errors.New("must name a key after the root")
	}
	trailing := len(rest) - len(strings.TrimRight(rest, `\`))
	if trailing%2 == 1 {
		return errors.New(`must not end in an unescaped '\'`)
	}
	return nil
}

// ValidateValue returns an error unless v is a value of type t: a bool that
// strconv.ParseBool accepts, a number that strconv.ParseFloat accepts, or
// any string.
func ValidateValue(t triggersv1beta1.JSONType, v string) error {
	switch t {
	case triggersv1beta1.JSONBool:
		if _, err := strconv.ParseBool(v); err != nil {
			return errors.New("must be a bool (true, false, 1, 0, t, f)")
		}
	case triggersv1beta1.JSONNumber:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return errors.New("must be a number")
		}
	case triggersv1beta1.JSONString:
	default:
		return fmt.Errorf("unknown type %q", t)
	}
	return nil
}
