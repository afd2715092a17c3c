// Package directory checks user names and passwords against the site's
// directory and reads the user's groups. LDAP is the one implementation:
// it searches for the user as a service account (or anonymously), binds
// as the entry found with the user's password on a connection of its own,
// and reads the groups that name the entry as a member.
//
// Every login the directory refuses, for an unknown user or a wrong
// password alike, is ErrBadLogin, so that a caller cannot learn which users
// exist; for an unknown user it binds to a DN that does not exist, so that
// the refusal takes about as long. Names that no login may use (see
// ErrInvalidName) and empty passwords are refused before any connection is
// made. The package logs through the logr.Logger of the context it is
// given, and never logs a password.
package directory
