# accelstack Makefile. `make help` lists the targets.

MODULE    := github.com/accelstack/accelstack
CMDS      := $(notdir $(wildcard cmd/*))
BIN_DIR   ?= bin
CACHE_DIR ?= $(or $(ACCELSTACK_CACHE),$(HOME)/.cache/accelstack)
LOCALBIN  ?= $(CACHE_DIR)/bin
export ACCELSTACK_CACHE := $(CACHE_DIR)

VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
GIT_COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS    := -X $(MODULE)/pkg/version.gitVersion=$(VERSION) \
              -X $(MODULE)/pkg/version.gitCommit=$(GIT_COMMIT) \
              -X $(MODULE)/pkg/version.buildDate=$(BUILD_DATE)

# The scheduler (cmd/scheduler) is kube-scheduler with the T9k plugins, in a
# Go module of its own that the root module's ./... leaves out: build-scheduler,
# vet, lint, test-go and verify run the go commands in its directory too. It
# is stamped as Kubernetes stamps kube-scheduler, with the version of
# k8s.io/kubernetes it is built on (what --version prints), and with this
# checkout's commit and the build date.
SCHEDULER_MODULE := cmd/scheduler
KUBE_VERSION      = $(shell awk '$$1 == "k8s.io/kubernetes" {print $$2; exit}' $(SCHEDULER_MODULE)/go.mod)
KUBE_MAJOR        = $(word 1,$(subst ., ,$(KUBE_VERSION:v%=%)))
KUBE_MINOR        = $(word 2,$(subst ., ,$(KUBE_VERSION)))
SCHEDULER_LDFLAGS = -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
                    -X k8s.io/component-base/version.gitMajor=$(KUBE_MAJOR) \
                    -X k8s.io/component-base/version.gitMinor=$(KUBE_MINOR) \
                    -X k8s.io/component-base/version.gitCommit=$(GIT_COMMIT) \
                    -X k8s.io/component-base/version.buildDate=$(BUILD_DATE) \
                    -X k8s.io/client-go/pkg/version.gitVersion=$(KUBE_VERSION)

# Tool versions, installed from the Go module proxy into $(LOCALBIN).
CONTROLLER_GEN_VERSION  ?= v0.23.0
GOLANGCI_LINT_VERSION   ?= v2.15.0
VERSITYGW_VERSION       ?= v1.8.0
# rclone is built from hack/tools/rclone (the version its go.mod pins), with
# the backends and commands that csi-s3 and the benchmarks run.
RCLONE_VERSION           = $(shell awk '$$1 == "require" && $$2 == "github.com/rclone/rclone" {print $$3}' hack/tools/rclone/go.mod)
# Ory Hydra, the OpenID Connect provider the tests sign in with, is built
# from hack/tools/hydra (the version its go.mod pins), with SQLite.
HYDRA_VERSION            = $(shell awk '$$1 == "require" && $$2 == "github.com/ory/hydra/v2" {print $$3}' hack/tools/hydra/go.mod)
CSI_PROVISIONER_VERSION ?= v5.3.0
# kube-router's network-policy controller enforces NetworkPolicies on the
# local test cluster (test/cluster) only: it is never shipped in an image.
KUBE_ROUTER_VERSION     ?= v2.1.0
# What the benchmarks compare against (make bench-tools).
TRAINING_OPERATOR_VERSION ?= v1.9.3
SCHEDULER_PLUGINS_VERSION ?= v0.33.5
KWOK_VERSION              ?= v0.7.0
OAUTH2_PROXY_VERSION      ?= v7.15.6

CONTROLLER_GEN  := $(LOCALBIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT   := $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
VERSITYGW       := $(LOCALBIN)/versitygw-$(VERSITYGW_VERSION)
# The name holds a hash of hack/tools/rclone, so a change there builds anew.
RCLONE          := $(LOCALBIN)/rclone-$(RCLONE_VERSION)-$(shell cat hack/tools/rclone/go.mod hack/tools/rclone/go.sum hack/tools/rclone/main.go | sha256sum | cut -c1-8)
# The same for hack/tools/hydra.
HYDRA           := $(LOCALBIN)/hydra-$(HYDRA_VERSION)-$(shell cat hack/tools/hydra/go.mod hack/tools/hydra/go.sum hack/tools/hydra/main.go | sha256sum | cut -c1-8)
CSI_PROVISIONER := $(LOCALBIN)/csi-provisioner-$(CSI_PROVISIONER_VERSION)
KUBE_ROUTER     := $(LOCALBIN)/kube-router-$(KUBE_ROUTER_VERSION)
TRAINING_OPERATOR := $(LOCALBIN)/training-operator-$(TRAINING_OPERATOR_VERSION)
SCHEDULER_PLUGINS := $(LOCALBIN)/scheduler-plugins-$(SCHEDULER_PLUGINS_VERSION)
KWOK              := $(LOCALBIN)/kwok-$(KWOK_VERSION)
OAUTH2_PROXY      := $(LOCALBIN)/oauth2-proxy-$(OAUTH2_PROXY_VERSION)

# Every go command make runs compiles with -trimpath, as the builds and the
# Kubernetes build do: a package is compiled once per mode (once for the
# binaries, the images, lint's type information, the end-to-end tests and
# the tools that share its module version; once more with -race for the
# tests), not again for each command whose flags differ. A GOFLAGS of the
# environment replaces it.
export GOFLAGS ?= -trimpath

# -vet=off: go test would run a subset of go vet's analyzers on every
# package again; make test runs lint beside the tests, whose govet runs
# them all. The unit packages use go test's result cache: a package whose
# test binary, and the files and environment variables its tests read,
# are those of its last passing run is reported "(cached)" instead of
# being linked and run again (GO_TEST_FLAGS="-race -vet=off -trimpath
# -count=1" runs them all); -trimpath keeps the cache's keys the same in
# every clone of the tree. The integration packages always run (-count=1):
# they start control planes, mounts and binaries the cache cannot see.
GO_TEST_FLAGS ?= -race -vet=off -trimpath
# The scheduler's module holds the kube-scheduler glue, whose one test is
# no concurrent code; without -race its packages are those the scheduler's
# build compiled (and, with the pinning modules' versions the same, the
# Kubernetes build), not the whole of kube-scheduler compiled again with
# the race detector.
SCHEDULER_TEST_FLAGS ?= -vet=off -trimpath
INTEGRATION_TEST_FLAGS := -count=1
# Per-package timeouts (go test -timeout bounds each package's test binary):
# unit packages run in seconds; the integration package starts real control
# planes, FUSE mounts and S3 outages; its root package took 14 minutes
# beside the others on two loaded cores.
UNIT_TEST_TIMEOUT        ?= 10m
INTEGRATION_TEST_TIMEOUT ?= 40m
# The two longest packages first: go test starts packages in the order
# given (each once), so they run beside the rest instead of after it.
INTEGRATION_PKGS         := ./test/integration ./test/integration/storage ./test/integration/...

# go-nvml's header marks functions deprecated that the bindings still wrap;
# silence the C compiler about them so real warnings stand out.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.DEFAULT_GOAL := help

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
		/^[a-zA-Z0-9_%-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } \
		/^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

.PHONY: run
run: manifests envtest-assets tools build ## Start the embedded default: control plane with CRDs, controllers, node binaries (simulated), local S3.
	go run ./test/cmd/devenv --bin-dir=$(BIN_DIR) $(RUN_ARGS)

##@ Build

.PHONY: build
build: $(addprefix build-,$(CMDS)) ## Build all binaries into bin/, version stamped.

build-%: ## Build one binary, e.g. build-csi-s3.
	go build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/$* ./cmd/$*

.PHONY: build-scheduler
build-scheduler: ## Build the scheduler from its own module (cmd/scheduler/go.mod), stamped with its Kubernetes version.
	@test -n "$(KUBE_VERSION)" || { echo "no k8s.io/kubernetes version in $(SCHEDULER_MODULE)/go.mod"; exit 1; }
	go -C $(SCHEDULER_MODULE) build -trimpath -ldflags "$(SCHEDULER_LDFLAGS)" -o $(abspath $(BIN_DIR))/scheduler .

.PHONY: images
images: build $(RCLONE) ## Build an OCI image archive per binary into bin/images; IMAGES_ARGS="--registry=R --tag=T" renames them.
	go run ./hack/images --bin-dir=$(BIN_DIR) --out-dir=$(BIN_DIR)/images --tool=rclone=$(RCLONE) $(IMAGES_ARGS)

##@ Code generation

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs into deploy/crds and RBAC into deploy/rbac.
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/... output:crd:artifacts:config=deploy/crds
	$(CONTROLLER_GEN) rbac:roleName=accelstack-controllers paths=./pkg/... output:rbac:artifacts:config=deploy/rbac
	hack/kustomize-list.sh deploy/crds deploy/rbac

##@ Checks

.PHONY: fmt
fmt: ## Format the Go code.
	gofmt -s -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet, in the root module and the scheduler's.
	go vet ./...
	go -C $(SCHEDULER_MODULE) vet ./...

.PHONY: lint
# golangci-lint's govet runs go vet's analyzers (on the e2e-tagged files
# too), so lint does not run go vet again: `make vet` does, alone. Its
# type information comes from the export data `go list -export` compiles,
# with GOFLAGS' -trimpath the builds' own compiles, found in the cache.
lint: $(GOLANGCI_LINT) ## Run gofmt check and golangci-lint (govet among its linters), in the root module and the scheduler's.
	@out=$$(gofmt -s -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt'ed:"; echo "$$out"; exit 1; fi
	$(GOLANGCI_LINT) run ./...
	cd $(SCHEDULER_MODULE) && $(abspath $(GOLANGCI_LINT)) run --config $(CURDIR)/.golangci.yml ./...

.PHONY: web
web: ## Copy the console's front-end packages out of the npm tarballs its package-lock.json pins (pkg/console/web/vendor).
	go run ./hack/npmvendor -dir pkg/console/web

.PHONY: verify
verify: generate manifests fmt web ## Regenerate everything, then fail if the tree changed.
	go mod tidy
	go -C $(SCHEDULER_MODULE) mod tidy
	hack/check-module-versions.sh
	@if [ -n "$$(git status --porcelain)" ]; then echo "the tree is dirty after regeneration:"; git status --porcelain; git diff | head -50; exit 1; fi

##@ Tests

.PHONY: test
test: envtest-assets tools ## Everything CI runs: lint, unit and real-part tests (lint beside the tests).
	@$(MAKE) --no-print-directory lint & lint=$$!; \
	$(MAKE) --no-print-directory test-go; tests=$$?; \
	wait $$lint; lint=$$?; \
	if [ $$lint -ne 0 ] || [ $$tests -ne 0 ]; then echo "lint: exit $$lint; tests: exit $$tests"; exit 1; fi

.PHONY: test-go
test-go: $(VERSITYGW) $(RCLONE) $(HYDRA) ## Run the Go tests (unit, the scheduler module's too, and integration against real parts from the cache).
	@export KUBEBUILDER_ASSETS=$$(hack/envtest-assets.sh) ACCELSTACK_VERSITYGW=$(VERSITYGW) ACCELSTACK_RCLONE=$(RCLONE) ACCELSTACK_HYDRA=$(HYDRA); \
	units=$$(go list ./... | grep -v '/test/integration'); \
	echo "go test $(GO_TEST_FLAGS) $(INTEGRATION_TEST_FLAGS) -timeout $(INTEGRATION_TEST_TIMEOUT) $(INTEGRATION_PKGS) (alongside the unit packages)"; \
	go test $(GO_TEST_FLAGS) $(INTEGRATION_TEST_FLAGS) -timeout $(INTEGRATION_TEST_TIMEOUT) $(INTEGRATION_PKGS) & integration=$$!; \
	echo "go test $(GO_TEST_FLAGS) -p 1 -timeout $(UNIT_TEST_TIMEOUT) <unit packages>"; \
	go test $(GO_TEST_FLAGS) -p 1 -timeout $(UNIT_TEST_TIMEOUT) $$units; unit=$$?; \
	echo "go -C $(SCHEDULER_MODULE) test $(SCHEDULER_TEST_FLAGS) -timeout $(UNIT_TEST_TIMEOUT) ./..."; \
	go -C $(SCHEDULER_MODULE) test $(SCHEDULER_TEST_FLAGS) -timeout $(UNIT_TEST_TIMEOUT) ./...; scheduler=$$?; \
	echo "go test -run '^TestProxyAllocations$$' ./pkg/serving/router/ (its bytes bound holds without -race only)"; \
	go test -run '^TestProxyAllocations$$' ./pkg/serving/router/; norace=$$?; \
	wait $$integration; integ=$$?; \
	if [ $$unit -ne 0 ] || [ $$scheduler -ne 0 ] || [ $$norace -ne 0 ] || [ $$integ -ne 0 ]; then \
		echo "unit packages: exit $$unit; scheduler module: exit $$scheduler; router without -race: exit $$norace; integration: exit $$integ"; exit 1; fi

.PHONY: bench
bench: envtest-assets tools bench-tools ## Run the Go benchmarks and each bench program in test/bench/*, and write their tables into docs/benchmarks.md.
	KUBEBUILDER_ASSETS=$$(hack/envtest-assets.sh) ACCELSTACK_VERSITYGW=$(VERSITYGW) ACCELSTACK_RCLONE=$(RCLONE) ACCELSTACK_HYDRA=$(HYDRA) \
		ACCELSTACK_TRAINING_OPERATOR=$(TRAINING_OPERATOR) ACCELSTACK_SCHEDULER_PLUGINS=$(SCHEDULER_PLUGINS) \
		ACCELSTACK_KWOK=$(KWOK) ACCELSTACK_OAUTH2_PROXY=$(OAUTH2_PROXY) \
		go run ./hack/benchdoc -doc docs/benchmarks.md -bench-dir test/bench

##@ Local cluster

CLUSTER := go run ./test/cmd/cluster

.PHONY: cluster-up
cluster-up: envtest-assets tools ## Start the local single-node Kubernetes (root): control plane, containerd, kubelet, local images.
	$(CLUSTER) up

.PHONY: workload-images
workload-images: ## Build the local cluster's workload images from Debian packages (cluster-up builds those missing).
	$(CLUSTER) workload-images

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and leave the host as cluster-up found it.
	$(CLUSTER) down

.PHONY: demo
demo: envtest-assets tools ## Local cluster, accelstack from deploy/, the examples; prints what a user looks at.
	$(CLUSTER) demo

.PHONY: test-e2e
test-e2e: envtest-assets tools ## End-to-end tests on a local cluster of their own (a running one is stopped first).
	$(CLUSTER) down
# -parallel 4: the tests that call t.Parallel mostly wait (idle windows,
# cron schedules, pods starting) with the cores idle; four at a time
# overlap the waits.
	go test -tags e2e -count=1 -vet=off -p 1 -parallel 4 -v -timeout 45m ./test/cluster/... ./test/e2e/...

##@ Tools

.PHONY: envtest-assets
envtest-assets: ## Build (or find cached) etcd, kube-apiserver and friends; prints KUBEBUILDER_ASSETS.
	hack/envtest-assets.sh

.PHONY: tools
tools: $(CONTROLLER_GEN) $(GOLANGCI_LINT) $(VERSITYGW) $(RCLONE) $(HYDRA) $(CSI_PROVISIONER) $(KUBE_ROUTER) ## Install the pinned tools into the cache.

$(CONTROLLER_GEN):
	$(call go-install-tool,$@,sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_GEN_VERSION),controller-gen)
$(GOLANGCI_LINT):
	$(call go-install-tool,$@,github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION),golangci-lint)
$(VERSITYGW):
	$(call go-install-tool,$@,github.com/versity/versitygw/cmd/versitygw,$(VERSITYGW_VERSION),versitygw)
$(RCLONE):
	@test -n "$(RCLONE_VERSION)" || { echo "no github.com/rclone/rclone requirement in hack/tools/rclone/go.mod"; exit 1; }
	@set -e; echo "building rclone $(RCLONE_VERSION) (hack/tools/rclone)"; mkdir -p $(LOCALBIN); \
		go -C hack/tools/rclone build -trimpath -ldflags "-s -w -X github.com/rclone/rclone/fs.Version=$(RCLONE_VERSION)" -o $@ .; \
		ln -sf $$(basename $@) $(LOCALBIN)/rclone
# cgo for SQLite, the database the tests run Hydra on.
$(HYDRA):
	@test -n "$(HYDRA_VERSION)" || { echo "no github.com/ory/hydra/v2 requirement in hack/tools/hydra/go.mod"; exit 1; }
	@set -e; echo "building hydra $(HYDRA_VERSION) (hack/tools/hydra)"; mkdir -p $(LOCALBIN); \
		CGO_ENABLED=1 go -C hack/tools/hydra build -trimpath -tags sqlite,sqlite_omit_load_extension \
			-ldflags "-s -w -X github.com/ory/hydra/v2/driver/config.Version=$(HYDRA_VERSION)" -o $@ .; \
		ln -sf $$(basename $@) $(LOCALBIN)/hydra
$(CSI_PROVISIONER):
	$(call go-build-module-tool,$@,github.com/kubernetes-csi/external-provisioner/v5,$(CSI_PROVISIONER_VERSION),./cmd/csi-provisioner,csi-provisioner)
# Only the one binary, for the test cluster (see KUBE_ROUTER_VERSION).
$(KUBE_ROUTER):
	$(call go-install-tool,$@,github.com/cloudnativelabs/kube-router/v2/cmd/kube-router,$(KUBE_ROUTER_VERSION),kube-router)

.PHONY: bench-tools
bench-tools: $(TRAINING_OPERATOR) $(SCHEDULER_PLUGINS) $(KWOK) $(OAUTH2_PROXY) ## Install what the benchmarks compare against and run on: the Kubeflow training operator, scheduler-plugins (coscheduling), kwok (fake nodes), oauth2-proxy.

$(TRAINING_OPERATOR):
	$(call go-install-tool,$@,github.com/kubeflow/training-operator/cmd/training-operator.v1,$(TRAINING_OPERATOR_VERSION),training-operator.v1,training-operator)
$(SCHEDULER_PLUGINS):
	$(call go-build-module-tool,$@,sigs.k8s.io/scheduler-plugins,$(SCHEDULER_PLUGINS_VERSION),./cmd/scheduler,scheduler-plugins)
$(KWOK):
	$(call go-build-module-tool,$@,sigs.k8s.io/kwok,$(KWOK_VERSION),./cmd/kwok,kwok)
$(OAUTH2_PROXY):
	$(call go-install-tool,$@,github.com/oauth2-proxy/oauth2-proxy/v7,$(OAUTH2_PROXY_VERSION),oauth2-proxy)

# go-install-tool installs package $(2) at version $(3), whose binary is
# named $(4), as the file $(1), and points the link $(LOCALBIN)/$(5) (what
# the test harness runs; $(4) if not given) at it. The version is in the file
# name, so a version bump here installs anew.
define go-install-tool
@set -e; echo "installing $(2)@$(3)"; mkdir -p $(LOCALBIN); tmp=$$(mktemp -d); \
	GOBIN=$$tmp go install $(2)@$(3); mv $$tmp/$(4) $(1); rm -rf $$tmp; \
	ln -sf $$(basename $(1)) $(LOCALBIN)/$(or $(5),$(4))
endef

# go-build-module-tool builds package $(4) of module $(2) at version $(3),
# statically, as the file $(1), inside a copy of the module so that its own
# replace directives apply (go install refuses a module that has them),
# stripped and stamped with the version (main.version, as the kubernetes-csi
# sidecars read it), and points the link $(LOCALBIN)/$(5) at it.
define go-build-module-tool
@set -e; echo "building $(2)@$(3) $(4)"; mkdir -p $(LOCALBIN); tmp=$$(mktemp -d); \
	dir=$$(cd $$tmp && GOFLAGS=-mod=mod go mod download -json $(2)@$(3) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
	test -n "$$dir"; cp -r "$$dir" $$tmp/src; chmod -R u+w $$tmp/src; \
	(cd $$tmp/src && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w -X main.version=$(3)" -o $$tmp/$(5) $(4)); \
	mv $$tmp/$(5) $(1); rm -rf $$tmp; \
	ln -sf $$(basename $(1)) $(LOCALBIN)/$(5)
endef

.PHONY: clean
clean: ## Remove build outputs (not the tool cache).
	rm -rf $(BIN_DIR)
