package main

import (
	"os/exec"
	"strings"
	"testing"
)

// notLinked are the packages (and their subpackages) the controllers must
// not link, with why: each controller imports only the leaf contract of
// the server or binary it runs, never the server itself.
var notLinked = map[string]string{
	"github.com/accelstack/accelstack/pkg/serving/router":       "the MLService controller needs only pkg/serving/routerconfig",
	"github.com/accelstack/accelstack/pkg/eventlistener/server": "the EventListener controller needs only pkg/eventlistener/serverconfig",
	"github.com/cloudevents/sdk-go":                             "only the router and the workflow-events servers send or take CloudEvents",
	"google.golang.org/grpc":                                    "the StorageShim controller needs only pkg/csis3/s3volume, not the CSI driver",
}

// notImported are imports between sibling controllers that must not come
// back: importer (and its subpackages), the package it must not import,
// and where what it needed lives instead.
var notImported = []struct{ importer, imported, instead string }{
	{"github.com/accelstack/accelstack/pkg/serving", "github.com/accelstack/accelstack/pkg/datacube", "the executor's image and environment are in pkg/datacube/executorenv"},
	{"github.com/accelstack/accelstack/pkg/explorer", "github.com/accelstack/accelstack/pkg/notebook", "the activity sidecar's image is in pkg/activity"},
	{"github.com/accelstack/accelstack/pkg/tensorboard", "github.com/accelstack/accelstack/pkg/notebook", "the activity sidecar's image is in pkg/activity"},
}

// managerPkg is the manager that sets the controllers up; it imports them
// all, so none of them may import it (or a package under it) back.
const managerPkg = "github.com/accelstack/accelstack/pkg/manager"

// deps returns the packages cmd/controllers links, each with its imports.
// The test binary links what the command does, so a new import changes
// it and runs the tests of this file again.
func deps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		m[f[0]] = f[1:]
	}
	if len(m) < 100 {
		t.Fatalf("go list -deps listed %d packages, too few to be cmd/controllers'", len(m))
	}
	return m
}

// under reports whether p is pkg or one of its subpackages.
func under(p, pkg string) bool { return p == pkg || strings.HasPrefix(p, pkg+"/") }

// TestDependencyBounds checks that cmd/controllers links none of
// notLinked, naming what imports each one it does.
func TestDependencyBounds(t *testing.T) {
	m := deps(t)
	for p, imports := range m {
		for _, i := range imports {
			for bad, why := range notLinked {
				if under(i, bad) && !under(p, bad) {
					t.Errorf("cmd/controllers links %s, imported by %s: %s", i, p, why)
				}
			}
		}
	}
}

// TestManagerImportedOnlyHere checks that no package but cmd/controllers
// imports pkg/manager or a package under it: what the manager and the
// controllers share (the cache selectors) is a leaf of its own
// (pkg/cacheselector), so the package directories stay acyclic.
func TestManagerImportedOnlyHere(t *testing.T) {
	for p, imports := range deps(t) {
		if p == "github.com/accelstack/accelstack/cmd/controllers" || under(p, managerPkg) {
			continue
		}
		for _, i := range imports {
			if under(i, managerPkg) {
				t.Errorf("%s imports %s: what a controller shares with the manager belongs in a leaf outside pkg/manager", p, i)
			}
		}
	}
}

// TestSiblingImports checks that no controller imports a sibling of
// notImported for what belongs to a shared contract.
func TestSiblingImports(t *testing.T) {
	for p, imports := range deps(t) {
		for _, rule := range notImported {
			if !under(p, rule.importer) {
				continue
			}
			for _, i := range imports {
				if i == rule.imported {
					t.Errorf("%s imports %s: %s", p, i, rule.instead)
				}
			}
		}
	}
}
