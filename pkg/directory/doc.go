// Package directory checks user names and passwords against a directory of
// users and reads the user's groups. It has two implementations of
// Directory. LDAP, for sites, searches for the user as a service account
// (or anonymously), binds as the entry found with the user's password on a
// connection of its own, and reads the groups that name the entry as a
// member. Users, for small sites and the local cluster, reads a static
// list of users with bcrypt password hashes and groups from a YAML file,
// and reads it again when it changes.
//
// Every login a directory refuses, for an unknown user or a wrong
// password alike, is ErrBadLogin, so that a caller cannot learn which users
// exist; for an unknown user LDAP binds to a DN that does not exist, and
// Users compares the password with a dummy hash, so that the refusal takes
// about as long. Names that no login may use (see ErrInvalidName) and
// empty passwords are refused before any connection is made or any hash
// compared. The package logs through the logr.Logger of the context it is
// given, and never logs a password.
package directory
