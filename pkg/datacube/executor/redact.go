package executor

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// redacted replaces a secret in messages.
const redacted = "<redacted>"

// Redactor removes known secret values from text and errors.
type Redactor struct {
	secrets  []string
	replacer *strings.Replacer
}

// NewRedactor returns a Redactor for the given secrets. Besides each value it
// also removes the value's URL-escaped and base64 forms, in which a token
// can appear in a URL or an Authorization header.
func NewRedactor(secrets ...string) *Redactor {
	seen := map[string]bool{}
	var all []string
	add := func(s string) {
		if len(s) >= 3 && !seen[s] {
			seen[s] = true
			all = append(all, s)
		}
	}
	for _, s := range secrets {
		add(s)
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
		add(base64.StdEncoding.EncodeToString([]byte(s)))
	}
	// Longest first, so that a secret containing another is removed whole.
	sort.Slice(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	var pairs []string
	for _, s := range all {
		pairs = append(pairs, s, redacted)
	}
	return &Redactor{secrets: secrets, replacer: strings.NewReplacer(pairs...)}
}

// secretList returns the secrets the Redactor was made with.
func (r *Redactor) secretList() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.secrets...)
}

// String returns s without secrets.
func (r *Redactor) String(s string) string {
	if r == nil || r.replacer == nil {
		return s
	}
	return r.replacer.Replace(s)
}

// Error returns err with its message stripped of secrets; errors.Is and
// errors.As still see the original.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: r.String(err.Error()), err: err}
}

// redactedError is an error whose message has been redacted.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// logFilter is a klog.LogFilter that redacts the secrets of a Redactor
// from messages and from string, error and fmt.Stringer arguments.
type logFilter struct{ r *Redactor }

func (f logFilter) values(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			out[i] = f.r.String(v)
		case error:
			out[i] = f.r.Error(v)
		case fmt.Stringer:
			out[i] = f.r.String(v.String())
		default:
			out[i] = a
		}
	}
	return out
}

// Filter redacts the arguments of a print-style call.
func (f logFilter) Filter(args []any) []any { return f.values(args) }

// FilterF redacts the format and arguments of a printf-style call.
func (f logFilter) FilterF(format string, args []any) (string, []any) {
	return f.r.String(format), f.values(args)
}

// FilterS redacts the message and key/value pairs of a structured call.
func (f logFilter) FilterS(msg string, kv []any) (string, []any) {
	return f.r.String(msg), f.values(kv)
}
