// Package identity tests the identity provider the platform signs users in
// with, a real Ory Hydra (OpenID Connect) on SQLite, as the harness starts
// it for the tests that need one.
package identity
