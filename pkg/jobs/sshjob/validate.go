package sshjob

import (
	"path"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// safePath matches the paths that go into the SSH configuration and the
// sshd command line unquoted: no whitespace, quotes or shell syntax.
var safePath = regexp.MustCompile(`^/[A-Za-z0-9._/+@-]*$`)

// ValidatePath checks a path of the ssh settings: absolute, clean, and
// free of what SSH's configuration or a shell treats as syntax.
func ValidatePath(p *field.Path, value string) field.ErrorList {
	if value == "" {
		return nil
	}
	if !safePath.MatchString(value) || path.Clean(value) != value {
		return field.ErrorList{field.Invalid(p, value,
			"must be a clean absolute path of letters, digits and . _ / + @ -")}
	}
	return nil
}
