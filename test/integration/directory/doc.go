// Package directory tests the LDAP directory the gateway's login checks
// passwords against (pkg/directory) on a real OpenLDAP server, Debian's
// slapd as the harness starts it: logins, refusals, filter injection,
// groups, and that no password reaches the log.
package directory
