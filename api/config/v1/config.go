// Package v1 holds the versioned configuration files of the node binaries
// (device-plugin, node-agent). Settings resolve command line over
// environment over file over default.
package v1

// Version is the only config file version this package reads.
const Version = "v1"
