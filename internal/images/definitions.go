package images

import (
	"fmt"
	"slices"
)

// Registry, Tag and the binary's name make the reference deploy/ runs each
// image by (deploy/kustomization.yaml), e.g. ghcr.io/accelstack/csi-s3:latest.
const (
	Registry = "ghcr.io/accelstack"
	Tag      = "latest"
)

// DebianRelease is the Debian release the Dockerfiles install the images'
// programs from; `make images` copies them from the build machine, on CI
// this release.
const DebianRelease = "bookworm"

// Path is the PATH of every image.
const Path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

// caCertificates is the CA bundle that clients of S3, Hugging Face and git
// servers over HTTPS verify them with: Go's crypto/tls, libcurl and rclone
// all read it.
var caCertificates = File{Path: "/etc/ssl/certs/ca-certificates.crt", Package: "ca-certificates"}

// Definitions are the images of the binaries of cmd/, sorted by binary.
var Definitions = []Definition{
	{
		// The activity sidecar of Notebook, TensorBoard and Explorer pods;
		// the controllers run it as non-root.
		Binary: "activity-proxy",
		User:   "65532:65532",
	},
	{
		// The web consoles' pages, embedded; its Deployment runs it as
		// non-root.
		Binary: "console",
		User:   "65532:65532",
	},
	{
		Binary: "controllers",
		// The Deployment runs it as non-root.
		User: "65532:65532",
	},
	{
		// The CSI node service mounts buckets with rclone or s3fs, unmounts
		// FUSE mounts with fusermount3 and bind-mounts with mount-utils.
		Binary: "csi-s3",
		Programs: []Program{
			{Path: "/usr/bin/rclone", Tool: "rclone"},
			{Path: "/usr/bin/s3fs", Host: "/usr/bin/s3fs", Package: "s3fs"},
			{Path: "/usr/bin/fusermount3", Host: "/bin/fusermount3", Package: "fuse3"},
			{Path: "/usr/bin/mount", Host: "/bin/mount", Package: "mount"},
			{Path: "/usr/bin/umount", Host: "/bin/umount", Package: "mount"},
			{Path: "/usr/bin/findmnt", Host: "/bin/findmnt", Package: "util-linux"},
		},
		Files: []File{caCertificates},
		Links: []Link{{Path: "/usr/bin/fusermount", Target: "fusermount3"}},
	},
	{
		// git sources and sinks run the git CLI, which reaches HTTP(S)
		// remotes through its remote-http helper.
		Binary: "datacube-executor",
		Programs: []Program{
			{Path: "/usr/bin/git", Host: "/usr/bin/git", Package: "git"},
			{Path: "/usr/lib/git-core/git-remote-http", Host: "/usr/lib/git-core/git-remote-http", Package: "git"},
		},
		Files: []File{caCertificates},
		Links: []Link{{Path: "/usr/lib/git-core/git-remote-https", Target: "git-remote-http"}},
	},
	{Binary: "device-plugin"},
	{
		// The way in to the web workloads; its Deployment runs it as
		// non-root.
		Binary: "gateway",
		User:   "65532:65532",
	},
	{Binary: "node-agent"},
	{
		// The T9k Scheduler, built from a module of its own
		// (cmd/scheduler/go.mod); the Deployment runs it as non-root.
		Binary: "scheduler",
		User:   "65532:65532",
	},
	{
		// The command line, for pods that drive the platform (a workflow
		// step, a CI job); users install the binary itself.
		Binary: "t9k",
		User:   "65532:65532",
	},
	{
		// The port-forward, for pods that reach a Notebook's SSH server or
		// a pod's port through the platform; users install the binary.
		Binary: "t9k-pf",
		User:   "65532:65532",
	},
	{
		// The router of MLServices; the controllers' Deployments run it
		// as non-root.
		Binary: "serving-router",
		User:   "65532:65532",
	},
	{
		// The EventListener and WorkflowTrigger servers; the controllers'
		// Deployments run them as non-root.
		Binary: "workflow-events",
		User:   "65532:65532",
	},
	{
		// The step sequencer of SeqPod pods: their init container copies
		// it into the pod (workflow-tools install) to run in the steps'
		// images, so it needs no other file and links statically
		// (cmd/workflow-tools TestStaticallyLinked). Non-root unless the
		// pod names its user.
		Binary: "workflow-tools",
		User:   "65532:65532",
	},
}

// Definition is what the image of one accelstack binary holds: the binary
// at /usr/bin/<Binary>, its entrypoint, and the Programs, Files and Links.
// Every executable comes with its shared-library closure.
type Definition struct {
	// Binary is the command, built from cmd/<Binary> (from its own Go
	// module where cmd/<Binary>/go.mod exists).
	Binary string
	// User is the user:group the container runs as; empty means root.
	User string
	// Programs are the other programs the binary runs.
	Programs []Program
	// Files are data files the binary or its programs read.
	Files []File
	// Links are symbolic links, such as a program's second name.
	Links []Link
}

// Program is a program an image holds besides its binary: one from a
// Debian package, or a Go tool of the tool cache (make tools).
type Program struct {
	// Path is the program's path in the image.
	Path string
	// Host is its path where Package is installed; empty for a Go tool.
	Host string
	// Package is the Debian package that installs it.
	Package string
	// Tool names the Go tool of the Makefile, e.g. rclone; its module and
	// version are the Makefile's.
	Tool string
}

// File is a data file of a Debian package, at the same path in the image.
type File struct {
	Path, Package string
}

// Link is a symbolic link at Path pointing to Target.
type Link struct {
	Path, Target string
}

// Lookup returns the definition of binary.
func Lookup(binary string) (Definition, error) {
	i := slices.IndexFunc(Definitions, func(d Definition) bool { return d.Binary == binary })
	if i < 0 {
		return Definition{}, fmt.Errorf("no image definition for %q", binary)
	}
	return Definitions[i], nil
}

// Entrypoint is the command the image runs: the binary.
func (d Definition) Entrypoint() []string { return []string{"/usr/bin/" + d.Binary} }

// Packages returns the Debian packages the image's programs and files come
// from, sorted.
func (d Definition) Packages() []string {
	var pkgs []string
	for _, p := range d.Programs {
		if p.Package != "" {
			pkgs = append(pkgs, p.Package)
		}
	}
	for _, f := range d.Files {
		pkgs = append(pkgs, f.Package)
	}
	slices.Sort(pkgs)
	return slices.Compact(pkgs)
}

// Tools returns the names of the Go tools the image holds, sorted.
func (d Definition) Tools() []string {
	var tools []string
	for _, p := range d.Programs {
		if p.Tool != "" {
			tools = append(tools, p.Tool)
		}
	}
	slices.Sort(tools)
	return slices.Compact(tools)
}

// Ref returns the reference of binary's image in registry with tag, e.g.
// Ref(Registry, "csi-s3", Tag) is ghcr.io/accelstack/csi-s3:latest.
func Ref(registry, binary, tag string) string {
	return registry + "/" + binary + ":" + tag
}
