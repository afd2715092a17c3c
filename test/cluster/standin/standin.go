// Package standin holds the programs of the local cluster's Explorer image:
// stand-ins for File Browser and code-server, whose images cannot be pulled
// where the cluster runs and which Debian does not package. Each takes the
// command line the Explorer controller writes, refuses any other (exit 2),
// and answers the part of its original's HTTP interface that the e2e tests
// and a user's first look need: health and a listing of the volume.
package standin

import _ "embed"

// FileBrowser is the stand-in for /filebrowser.
//
//go:embed filebrowser.py
var FileBrowser string

// CodeServer is the stand-in for /usr/bin/code-server.
//
//go:embed code-server.py
var CodeServer string

// DumbInit is the stand-in for /usr/bin/dumb-init, which the controller
// runs code-server under.
//
//go:embed dumb-init.sh
var DumbInit string
