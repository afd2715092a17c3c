package directory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Identity is who the directory says a user is.
type Identity struct {
	// Name is the user's name as the directory spells it.
	Name string
	// Groups are the names of the user's groups, sorted, without
	// duplicates, at most MaxGroups; nil if none.
	Groups []string
}

// ErrBadLogin is an unknown user or a wrong password: one error for both,
// so that a caller cannot learn which users exist.
var ErrBadLogin = errors.New("wrong user name or password")

// ErrInvalidName is a user name that no login may use: empty, longer than
// MaxNameLen bytes, not UTF-8, holding a control character, or starting
// with "system:" in any case (Kubernetes reserves that prefix). It wraps
// ErrBadLogin, so that a caller that checks for ErrBadLogin answers it as
// any refused login; it reveals nothing about which users exist, since it
// depends on the name alone.
var ErrInvalidName = fmt.Errorf("%w: user name not allowed", ErrBadLogin)

// Directory checks a user's password and returns the user's identity.
type Directory interface {
	// Authenticate returns the identity of the user name with password,
	// an error wrapping ErrBadLogin if the directory refuses them, or
	// another error if the directory could not be asked.
	Authenticate(ctx context.Context, name, password string) (Identity, error)
}

// MaxNameLen is the longest user or group name accepted, in bytes.
const MaxNameLen = 253

// MaxGroups is the most groups an Identity holds; the first MaxGroups in
// sorted order are kept.
const MaxGroups = 100

// reservedPrefix starts the user and group names Kubernetes reserves.
const reservedPrefix = "system:"

// checkName returns why name cannot be a user or group name, or nil.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty")
	case len(name) > MaxNameLen:
		return fmt.Errorf("longer than %d bytes", MaxNameLen)
	case !utf8.ValidString(name):
		return errors.New("not valid UTF-8")
	case strings.ContainsFunc(name, unicode.IsControl):
		return errors.New("holds a control character")
	case hasReservedPrefix(name):
		return fmt.Errorf("starts with %q", reservedPrefix)
	}
	return nil
}

// hasReservedPrefix reports whether name starts with reservedPrefix under
// Unicode case folding, as a directory that matches names without regard
// to case would.
func hasReservedPrefix(name string) bool {
	n := utf8.RuneCountInString(reservedPrefix)
	r := []rune(name)
	return len(r) >= n && strings.EqualFold(string(r[:n]), reservedPrefix)
}
