#!/usr/bin/env bash
# check-module-versions.sh fails when a module whose packages both the root
# module's binaries and another build compile (the Kubernetes build of
# hack/tools/kube, the scheduler's module) is at two versions: at one
# version, each of its packages is compiled once and found in the build
# cache by the other build (make verify runs it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# modules prints "path version" of every module, but the main one, that
# the packages $2... of module directory $1 compile, replacements applied.
modules() {
	go -C "$1" list -deps -f '{{with .Module}}{{if not .Main}}{{with .Replace}}{{.Path}} {{.Version}}{{else}}{{$.Module.Path}} {{$.Module.Version}}{{end}}{{end}}{{end}}' "${@:2}" | sort -u
}

root=$(mktemp) other=$(mktemp)
trap 'rm -f "$root" "$other"' EXIT
modules . ./cmd/... >"$root"
status=0
check() {
	local name=$1
	shift
	modules "$@" >"$other"
	local diff
	diff=$(join "$root" "$other" | awk '$2 != $3 {print "  " $1 ": " $2 " in the root module, " $3 " in '"$name"'"}')
	if [[ -n $diff ]]; then
		echo "modules at two versions (align them with go get in $name):"
		echo "$diff"
		status=1
	fi
}
check hack/tools/kube hack/tools/kube k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubectl
check cmd/scheduler cmd/scheduler .
exit $status
