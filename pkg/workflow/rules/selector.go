package rules

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Operators of a requirement. "=" is parsed as opEquals.
const (
	opEquals    = "=="
	opNotEquals = "!="
	opGreater   = ">"
	opLess      = "<"
	opIn        = "in"
	opNotIn     = "notin"
)

// operatorChars are the characters of the symbolic operators; with the
// delimiters they end a path or a value.
const (
	operatorChars = "=!<>"
	delimiters    = "=!<>(),"
)

// operatorsHint lists the operators for error messages.
const operatorsHint = "the operators are ==, =, !=, >, <, in and notin"

// Selector is a parsed fieldSelector: requirements that must all hold. The
// zero Selector has none and matches every object.
type Selector struct {
	reqs []requirement
}

// requirement is one "<path> <op> <value>" of a selector.
type requirement struct {
	path   []string
	op     string
	values []string // one for ==, !=, > and <; at least one for in and notin
	num    number   // the value of > and <
}

// SyntaxError says what is wrong with a fieldSelector and where.
type SyntaxError struct {
	// Selector is the fieldSelector.
	Selector string
	// Column is the 1-based byte column of the error in Selector.
	Column int
	// Msg says what is wrong.
	Msg string
}

// Error returns the error with the selector, the column and the message.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid fieldSelector %q: column %d: %s", e.Selector, e.Column, e.Msg)
}

// Detail returns the column and the message without the selector, for a
// field.Invalid error that shows the selector itself.
func (e *SyntaxError) Detail() string {
	return fmt.Sprintf("column %d: %s", e.Column, e.Msg)
}

// Parse parses a fieldSelector. An empty or blank selector has no
// requirements. The error is a *SyntaxError.
func Parse(selector string) (Selector, error) {
	p := &parser{s: selector}
	p.skipSpace()
	if p.eof() {
		return Selector{}, nil
	}
	var sel Selector
	for {
		r, err := p.requirement()
		if err != nil {
			return Selector{}, err
		}
		sel.reqs = append(sel.reqs, r)
		p.skipSpace()
		if p.eof() {
			return sel, nil
		}
		switch c := p.peek(); c {
		case ',':
			p.pos++
			p.skipSpace()
			if p.eof() {
				return Selector{}, p.errorf(p.pos, "a requirement must follow the last ','")
			}
		case '(':
			return Selector{}, p.errorf(p.pos, "unexpected '(': only in and notin take a list of values")
		case ')':
			return Selector{}, p.errorf(p.pos, "unbalanced parentheses: ')' without '('")
		default:
			return Selector{}, p.errorf(p.pos, "unexpected %q after a requirement: requirements are separated by ',' and a value is one word", p.rest())
		}
	}
}

// Matches reports whether obj, the unstructured content of an object,
// meets every requirement.
func (s Selector) Matches(obj map[string]any) bool {
	for _, r := range s.reqs {
		if !r.matches(obj) {
			return false
		}
	}
	return true
}

// Empty reports whether the selector has no requirements.
func (s Selector) Empty() bool { return len(s.reqs) == 0 }

// String returns the selector in its canonical form, e.g.
// "status.phase in (Failed,Succeeded),status.succeeded > 0".
func (s Selector) String() string {
	parts := make([]string, len(s.reqs))
	for i, r := range s.reqs {
		path := strings.Join(r.path, ".")
		if r.op == opIn || r.op == opNotIn {
			parts[i] = path + " " + r.op + " (" + strings.Join(r.values, ",") + ")"
		} else {
			parts[i] = path + " " + r.op + " " + r.values[0]
		}
	}
	return strings.Join(parts, ",")
}

func (r requirement) matches(obj map[string]any) bool {
	v, found := lookup(obj, r.path)
	switch r.op {
	case opGreater, opLess:
		if !found {
			return false
		}
		n, ok := toNumber(v)
		if !ok {
			return false
		}
		c, ok := n.compare(r.num)
		if !ok {
			return false
		}
		if r.op == opGreater {
			return c > 0
		}
		return c < 0
	}
	s := ""
	if found {
		s = toString(v)
	}
	switch r.op {
	case opEquals:
		return s == r.values[0]
	case opNotEquals:
		return s != r.values[0]
	case opIn:
		return slices.Contains(r.values, s)
	default: // opNotIn
		return !slices.Contains(r.values, s)
	}
}

// lookup returns the value at path in obj; found is false when a field on
// the way is missing, a list index is out of range or not a number, or the
// value is null.
func lookup(obj map[string]any, path []string) (v any, found bool) {
	var cur any = obj
	for _, seg := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
		if cur == nil {
			return nil, false
		}
	}
	return cur, true
}

// toString formats v as a string: a string as it is, anything else as its
// compact JSON.
func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// number is an integer or a float.
type number struct {
	isInt bool
	i     int64
	f     float64
}

// parseNumber parses a decimal integer or a finite float.
func parseNumber(s string) (number, bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return number{isInt: true, i: i, f: float64(i)}, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return number{}, false
	}
	return number{f: f}, true
}

// toNumber returns the number v holds: a Go number of unstructured content,
// a json.Number, or a string holding a number.
func toNumber(v any) (number, bool) {
	switch x := v.(type) {
	case int64:
		return number{isInt: true, i: x, f: float64(x)}, true
	case int:
		return number{isInt: true, i: int64(x), f: float64(x)}, true
	case int32:
		return number{isInt: true, i: int64(x), f: float64(x)}, true
	case uint32:
		return number{isInt: true, i: int64(x), f: float64(x)}, true
	case uint64:
		if x <= math.MaxInt64 {
			return number{isInt: true, i: int64(x), f: float64(x)}, true
		}
		return number{f: float64(x)}, true
	case float64:
		return number{f: x}, !math.IsNaN(x)
	case float32:
		return number{f: float64(x)}, !math.IsNaN(float64(x))
	case json.Number:
		return parseNumber(string(x))
	case string:
		return parseNumber(strings.TrimSpace(x))
	}
	return number{}, false
}

// compare returns -1, 0 or 1 as n is less than, equal to or greater than m.
func (n number) compare(m number) (int, bool) {
	if n.isInt && m.isInt {
		switch {
		case n.i < m.i:
			return -1, true
		case n.i > m.i:
			return 1, true
		}
		return 0, true
	}
	switch {
	case n.f < m.f:
		return -1, true
	case n.f > m.f:
		return 1, true
	case n.f == m.f:
		return 0, true
	}
	return 0, false
}

// parser scans a fieldSelector.
type parser struct {
	s   string
	pos int
}

func (p *parser) eof() bool  { return p.pos >= len(p.s) }
func (p *parser) peek() byte { return p.s[p.pos] }

// rest returns what is left of the selector, shortened for a message.
func (p *parser) rest() string {
	r := p.s[p.pos:]
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

func (p *parser) skipSpace() {
	for !p.eof() && isSpace(p.peek()) {
		p.pos++
	}
}

func (p *parser) errorf(pos int, format string, args ...any) error {
	return &SyntaxError{Selector: p.s, Column: pos + 1, Msg: fmt.Sprintf(format, args...)}
}

// word scans a path or a value: up to a space, an operator or a delimiter.
func (p *parser) word() string {
	start := p.pos
	for !p.eof() && !isSpace(p.peek()) && !strings.ContainsRune(delimiters, rune(p.peek())) {
		p.pos++
	}
	return p.s[start:p.pos]
}

func (p *parser) requirement() (requirement, error) {
	var r requirement
	start := p.pos
	path := p.word()
	if path == "" {
		if c := p.peek(); c == ',' {
			return r, p.errorf(p.pos, "empty requirement: a field path must come before ','")
		} else if strings.ContainsRune(operatorChars, rune(c)) {
			return r, p.errorf(p.pos, "missing field path before the operator")
		}
		return r, p.errorf(p.pos, "expected a field path, found %q", p.rest())
	}
	segs, err := p.parsePath(path, start)
	if err != nil {
		return r, err
	}
	r.path = segs

	p.skipSpace()
	if p.eof() {
		return r, p.errorf(p.pos, "missing operator after the field path %q (%s)", path, operatorsHint)
	}
	opStart := p.pos
	switch c := p.peek(); {
	case strings.ContainsRune(operatorChars, rune(c)):
		for !p.eof() && strings.ContainsRune(operatorChars, rune(p.peek())) {
			p.pos++
		}
		switch op := p.s[opStart:p.pos]; op {
		case "==", "=":
			r.op = opEquals
		case "!=", ">", "<":
			r.op = op
		default:
			return r, p.errorf(opStart, "unknown operator %q (%s)", op, operatorsHint)
		}
	case c == ',' || c == '(' || c == ')':
		return r, p.errorf(p.pos, "missing operator after the field path %q (%s)", path, operatorsHint)
	default:
		op := p.word()
		switch op {
		case opIn, opNotIn:
			r.op = op
		default:
			if op == "" {
				op = p.rest()
			}
			return r, p.errorf(opStart, "unknown operator %q (%s)", op, operatorsHint)
		}
	}

	if r.op == opIn || r.op == opNotIn {
		r.values, err = p.valueList(r.op)
		return r, err
	}
	p.skipSpace()
	valStart := p.pos
	v := p.word()
	r.values = []string{v}
	if r.op == opGreater || r.op == opLess {
		if v == "" {
			return r, p.errorf(valStart, "missing number after %q", r.op)
		}
		n, ok := parseNumber(v)
		if !ok {
			return r, p.errorf(valStart, "%q compares numbers, and %q is not one", r.op, v)
		}
		r.num = n
	}
	return r, nil
}

// parsePath splits a field path, which starts at offset start, into its
// segments.
func (p *parser) parsePath(path string, start int) ([]string, error) {
	for i := 0; i < len(path); i++ {
		c := path[i]
		if !isPathChar(c) {
			return nil, p.errorf(start+i, "invalid character %q in the field path %q: a path is dot-separated names of letters, digits, '_', '-' and '/'", c, path)
		}
	}
	segs := strings.Split(path, ".")
	off := start
	for _, s := range segs {
		if s == "" {
			return nil, p.errorf(off, "empty segment in the field path %q", path)
		}
		off += len(s) + 1
	}
	return segs, nil
}

// valueList scans "(a, b, ...)" after in or notin.
func (p *parser) valueList(op string) ([]string, error) {
	p.skipSpace()
	if p.eof() || p.peek() != '(' {
		found := "the end"
		if !p.eof() {
			found = fmt.Sprintf("%q", p.rest())
		}
		return nil, p.errorf(p.pos, "expected '(' after %s, found %s", op, found)
	}
	open := p.pos
	p.pos++
	var values []string
	for {
		p.skipSpace()
		v := p.word()
		p.skipSpace()
		if p.eof() {
			return nil, p.errorf(open, "unbalanced parentheses: '(' is never closed")
		}
		switch c := p.peek(); c {
		case ',':
			values = append(values, v)
			p.pos++
		case ')':
			p.pos++
			if v == "" && len(values) == 0 {
				return nil, p.errorf(open, "empty list of values: %s needs at least one", op)
			}
			return append(values, v), nil
		default:
			return nil, p.errorf(p.pos, "unexpected %q in the values of %s: values are words separated by ','", c, op)
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isPathChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '/' || c == '.'
}
