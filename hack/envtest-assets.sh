#!/usr/bin/env bash
# envtest-assets.sh builds the real Kubernetes control-plane binaries the tests
# run against (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet, kubectl) from the Go module proxy and caches them outside the
# checkout. It prints the directory to use as KUBEBUILDER_ASSETS.
#
# The cache is keyed by a hash of the pinning modules under hack/tools, so a
# version bump rebuilds and a cached run returns at once.
#
# Usage: hack/envtest-assets.sh [--print-only]
#   --print-only  print the directory without building (empty if not built)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${ACCELSTACK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/accelstack}
tools=$root/hack/tools

key=$(cat "$tools"/kube/go.mod "$tools"/kube/go.sum "$tools"/etcd/go.mod "$tools"/etcd/go.sum | sha256sum | cut -c1-16)
dir=$cache/k8s-assets/$key
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)

if [[ ${1:-} == --print-only ]]; then
	[[ -f $dir/.complete ]] && echo "$dir"
	exit 0
fi

if [[ -f $dir/.complete ]]; then
	echo "$dir"
	exit 0
fi

mkdir -p "$dir"
log() { echo "envtest-assets: $*" >&2; }

# Stamp the version: unstamped binaries report "v0.0.0-master+$Format:%H$",
# which clients refuse to parse.
kver=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$tools/kube/go.mod")
minor=$(echo "$kver" | cut -d. -f2)
v=k8s.io/component-base/version
ldflags="-s -w -X $v.gitVersion=$kver -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$kver"

start=$(date +%s)
log "building etcd into $dir"
(cd "$tools/etcd" && go build -trimpath -ldflags "-s -w" -o "$dir/etcd" go.etcd.io/etcd/server/v3)
log "building Kubernetes $kver (a cold build takes several minutes)"
(cd "$tools/kube" && go build -trimpath -ldflags "$ldflags" -o "$dir/" \
	k8s.io/kubernetes/cmd/kube-apiserver \
	k8s.io/kubernetes/cmd/kube-controller-manager \
	k8s.io/kubernetes/cmd/kube-scheduler \
	k8s.io/kubernetes/cmd/kubelet \
	k8s.io/kubernetes/cmd/kubectl)
for b in "${bins[@]}"; do
	[[ -x $dir/$b ]] || { log "missing $b after build"; exit 1; }
done
touch "$dir/.complete"
log "built in $(($(date +%s) - start))s"
echo "$dir"
