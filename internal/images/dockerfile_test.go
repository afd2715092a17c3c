package images

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd, args string
}

// stage is one FROM of a Dockerfile and its instructions.
type stage struct {
	from, name string
	args       map[string]string // ARG defaults
	instrs     []instruction
}

// parseDockerfile splits a Dockerfile into stages.
func parseDockerfile(text string) ([]stage, error) {
	var stages []stage
	var logical []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		logical = append(logical, cur.String())
		cur.Reset()
	}
	for _, l := range logical {
		cmd, args, _ := strings.Cut(l, " ")
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.Join(strings.Fields(args), " ")}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			s := stage{from: f[0], args: map[string]string{}}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			return nil, fmt.Errorf("%s before the first FROM", in.cmd)
		}
		s := &stages[len(stages)-1]
		if in.cmd == "ARG" {
			name, def, _ := strings.Cut(in.args, "=")
			s.args[name] = def
		}
		s.instrs = append(s.instrs, in)
	}
	return stages, nil
}

// expand replaces ${NAME} with the stage's ARG default.
func (s stage) expand(v string) string {
	return os.Expand(v, func(name string) string { return s.args[name] })
}

// find returns the arguments of the instructions cmd of s.
func (s stage) find(cmd string) []string {
	var found []string
	for _, in := range s.instrs {
		if in.cmd == cmd {
			found = append(found, in.args)
		}
	}
	return found
}

// shellCommands returns the commands of the RUN instructions of s, split
// at &&.
func (s stage) shellCommands() []string {
	var cmds []string
	for _, run := range s.find("RUN") {
		for _, c := range strings.Split(run, "&&") {
			cmds = append(cmds, strings.TrimSpace(c))
		}
	}
	return cmds
}

// makefile is what the Dockerfiles must agree with in the Makefile.
type makefile struct {
	// versionVars maps each pkg/version variable that LDFLAGS stamps to the
	// make variable it takes, e.g. gitVersion -> VERSION.
	versionVars map[string]string
	// kubeStamps maps each variable, package.name, that SCHEDULER_LDFLAGS
	// stamps to the make variable it takes, e.g.
	// k8s.io/component-base/version.gitVersion -> KUBE_VERSION: how
	// build-scheduler stamps the binary of a module of its own.
	kubeStamps map[string]string
	// tools maps a Go tool's name to its module and version variable.
	tools map[string][2]string
	// moduleTools holds the Go tools built from a pinning module of
	// hack/tools (go -C hack/tools/<name> build).
	moduleTools map[string]bool
	// vars holds the NAME ?= value defaults.
	vars map[string]string
}

// moduleToolBuild matches a build of a tool from its pinning module in
// hack/tools, in the Makefile or a Dockerfile.
var moduleToolBuild = regexp.MustCompile(`go -C hack/tools/(\w+) build`)

func readMakefile(t *testing.T, root string) makefile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := makefile{versionVars: map[string]string{}, kubeStamps: map[string]string{}, tools: map[string][2]string{}, moduleTools: map[string]bool{}, vars: map[string]string{}}
	for _, v := range regexp.MustCompile(`-X \$\(MODULE\)/pkg/version\.(\w+)=\$\((\w+)\)`).FindAllStringSubmatch(string(b), -1) {
		m.versionVars[v[1]] = v[2]
	}
	for _, v := range regexp.MustCompile(`-X (k8s\.io/[\w./-]+\.\w+)=\$\((\w+)\)`).FindAllStringSubmatch(string(b), -1) {
		m.kubeStamps[v[1]] = v[2]
	}
	for _, v := range regexp.MustCompile(`\$\(call go-install-tool,\$@,(\S+?),\$\((\w+)\),(\S+?)\)`).FindAllStringSubmatch(string(b), -1) {
		m.tools[v[3]] = [2]string{v[1], v[2]}
	}
	for _, v := range moduleToolBuild.FindAllStringSubmatch(string(b), -1) {
		m.moduleTools[v[1]] = true
	}
	for _, v := range regexp.MustCompile(`(?m)^(\w+)\s*\?=\s*(\S+)\s*$`).FindAllStringSubmatch(string(b), -1) {
		m.vars[v[1]] = v[2]
	}
	if len(m.versionVars) == 0 || len(m.kubeStamps) == 0 || len(m.tools) == 0 {
		t.Fatalf("the Makefile's LDFLAGS, SCHEDULER_LDFLAGS or go-install-tool calls did not parse: %v %v %v", m.versionVars, m.kubeStamps, m.tools)
	}
	return m
}

// goVersion returns the major.minor of the go directive of go.mod.
func goVersion(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	return string(m[1])
}

// kubeVersion returns the k8s.io/kubernetes version that the go.mod at path
// requires.
func kubeVersion(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?k8s\.io/kubernetes\s+(v\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s requires no k8s.io/kubernetes", path)
	}
	return string(m[1])
}

// setDiff describes how got differs from want, or returns "".
func setDiff(what string, got, want []string) string {
	got, want = slices.Clone(got), slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	got, want = slices.Compact(got), slices.Compact(want)
	if slices.Equal(got, want) {
		return ""
	}
	var missing, extra []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			extra = append(extra, g)
		}
	}
	return fmt.Sprintf("%s %q; want %q: missing %q, extra %q", what, got, want, missing, extra)
}

// TestDockerfiles checks that each cmd/<binary>/Dockerfile builds what
// `make images` builds: the binary stamped like `make build`, the Go tools
// at the Makefile's versions, the Debian packages of the definition on the
// Debian release of the definition, the files laid out by hack/images
// --layer, and the definition's entrypoint, user and PATH. A binary with a
// Go module of its own (cmd/<binary>/go.mod, the scheduler) is built in
// its module's directory and stamped like `make build-scheduler`, with the
// Kubernetes version of its go.mod, which its version label records.
func TestDockerfiles(t *testing.T) {
	root := repoRoot(t)
	mk := readMakefile(t, root)
	goVer := goVersion(t, root)
	for _, d := range Definitions {
		t.Run(d.Binary, func(t *testing.T) {
			path := filepath.Join("cmd", d.Binary, "Dockerfile")
			b, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			stages, err := parseDockerfile(string(b))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if len(stages) != 3 {
				t.Fatalf("%s has %d stages, want build, rootfs and the image", path, len(stages))
			}
			build, rootfs, final := stages[0], stages[1], stages[2]
			errorf := func(format string, args ...any) { t.Errorf(path+": "+format, args...) }

			// What builds the binary, and the variables it stamps (package.name)
			// with the make variables they take.
			goMod := filepath.Join(root, "cmd", d.Binary, "go.mod")
			_, err = os.Stat(goMod)
			module := err == nil
			stamps := map[string]string{}
			for v, makeVar := range mk.versionVars {
				stamps["github.com/accelstack/accelstack/pkg/version."+v] = makeVar
			}
			isBuild := func(c string) bool { return strings.Contains(c, "go build") && strings.Contains(c, " ./cmd/") }
			wantBuild := "go build -trimpath ... -o /out/" + d.Binary + " ./cmd/" + d.Binary
			builds := func(c string) bool {
				return isBuild(c) && strings.HasSuffix(c, "-o /out/"+d.Binary+" ./cmd/"+d.Binary) && strings.Contains(c, "-trimpath")
			}
			versionVar, commitVar := mk.versionVars["gitVersion"], mk.versionVars["gitCommit"]
			if module {
				stamps = mk.kubeStamps
				moduleBuild := "go -C cmd/" + d.Binary + " build "
				isBuild = func(c string) bool {
					return strings.Contains(c, moduleBuild) || (strings.Contains(c, "go build") && strings.Contains(c, " ./cmd/"))
				}
				wantBuild = moduleBuild + "-trimpath ... -o /out/" + d.Binary + " ."
				builds = func(c string) bool {
					return strings.Contains(c, moduleBuild) && strings.HasSuffix(c, "-o /out/"+d.Binary+" .") && strings.Contains(c, "-trimpath")
				}
				versionVar = mk.kubeStamps["k8s.io/component-base/version.gitVersion"]
				commitVar = mk.kubeStamps["k8s.io/component-base/version.gitCommit"]
				if versionVar == "" || commitVar == "" {
					t.Fatalf("the Makefile's SCHEDULER_LDFLAGS stamps no k8s.io/component-base/version gitVersion or gitCommit: %v", mk.kubeStamps)
				}
				kver := kubeVersion(t, goMod)
				for _, s := range []stage{build, final} {
					if got := s.args[versionVar]; got != kver {
						errorf("stage %s: ARG %s=%s, want %s, the k8s.io/kubernetes of %s", s.from, versionVar, got, kver, filepath.Join("cmd", d.Binary, "go.mod"))
					}
				}
				if !slices.Contains(build.shellCommands(), "go -C cmd/"+d.Binary+" mod download") {
					errorf("the build stage does not run go -C cmd/%s mod download", d.Binary)
				}
			}

			if want := "golang:" + goVer + "-" + DebianRelease; build.from != want || build.name != "build" {
				errorf("first stage is FROM %s AS %s, want FROM %s AS build (go.mod's Go on Debian %s)", build.from, build.name, want, DebianRelease)
			}
			var built, installed []string
			for _, c := range build.shellCommands() {
				c = build.expand(c)
				if isBuild(c) {
					built = append(built, c)
				}
				if m := regexp.MustCompile(`go install (\S+)`).FindStringSubmatch(c); m != nil {
					installed = append(installed, m[1])
				}
				if m := moduleToolBuild.FindStringSubmatch(c); m != nil {
					installed = append(installed, "hack/tools/"+m[1])
				}
			}
			if len(built) != 1 || !builds(built[0]) {
				errorf("builds %q, want one %s", built, wantBuild)
			}
			for _, in := range build.find("RUN") {
				if !isBuild(in) || !strings.Contains(in, "/out/"+d.Binary+" ") {
					continue
				}
				for v, makeVar := range stamps {
					stamp := "-X " + v + "=${" + makeVar + "}"
					if !strings.Contains(in, stamp) {
						errorf("go build lacks %s, which make build stamps", stamp)
					}
				}
			}
			var wantTools []string
			for _, tool := range d.Tools() {
				if mk.moduleTools[tool] {
					wantTools = append(wantTools, "hack/tools/"+tool)
					continue
				}
				mt, ok := mk.tools[tool]
				if !ok {
					t.Fatalf("the Makefile installs no Go tool %s", tool)
				}
				wantTools = append(wantTools, mt[0]+"@"+mk.vars[mt[1]])
			}
			if diff := setDiff("go install or go -C hack/tools/<tool> build", installed, wantTools); diff != "" {
				errorf("%s", diff)
			}

			if want := "debian:" + DebianRelease + "-slim"; rootfs.from != want || rootfs.name != "rootfs" {
				errorf("second stage is FROM %s AS %s, want FROM %s AS rootfs", rootfs.from, rootfs.name, want)
			}
			var packages, layers []string
			for _, c := range rootfs.shellCommands() {
				if rest, ok := strings.CutPrefix(c, "apt-get install "); ok {
					for _, f := range strings.Fields(rest) {
						if !strings.HasPrefix(f, "-") {
							packages = append(packages, f)
						}
					}
				}
				if strings.HasPrefix(c, "/out/images ") {
					layers = append(layers, c)
				}
			}
			if diff := setDiff("apt-get install", packages, d.Packages()); diff != "" {
				errorf("%s", diff)
			}
			if !slices.Contains(rootfs.find("COPY"), "--from=build /out /out") {
				errorf("the rootfs stage does not COPY --from=build /out /out")
			}
			if len(layers) != 1 {
				t.Fatalf("%s: the rootfs stage runs /out/images %d times, want once", path, len(layers))
			}
			flags := strings.Fields(strings.TrimSuffix(strings.SplitN(layers[0], ">", 2)[0], " "))[1:]
			wantFlags := []string{"--layer=" + d.Binary, "--bin-dir=/out"}
			for _, tool := range d.Tools() {
				wantFlags = append(wantFlags, "--tool="+tool+"=/out/"+tool)
			}
			if diff := setDiff("/out/images", flags, wantFlags); diff != "" {
				errorf("%s", diff)
			}

			if final.from != "scratch" {
				errorf("the image stage is FROM %s, want FROM scratch", final.from)
			}
			if got := final.find("COPY"); !slices.Equal(got, []string{"--from=rootfs /rootfs /"}) {
				errorf("the image stage copies %q, want only --from=rootfs /rootfs /", got)
			}
			var entry []string
			if e := final.find("ENTRYPOINT"); len(e) != 1 || json.Unmarshal([]byte(e[0]), &entry) != nil || !slices.Equal(entry, d.Entrypoint()) {
				errorf("ENTRYPOINT %q, want %q", e, d.Entrypoint())
			}
			if got, want := final.find("ENV"), []string{"PATH=" + Path}; !slices.Equal(got, want) {
				errorf("ENV %q, want %q", got, want)
			}
			var wantUser []string
			if d.User != "" {
				wantUser = []string{d.User}
			}
			if got := final.find("USER"); !slices.Equal(got, wantUser) {
				errorf("USER %q, want %q", got, wantUser)
			}
			wantLabels := []string{LabelRevision + "=${" + commitVar + "}", LabelVersion + "=${" + versionVar + "}"}
			var labels []string
			for _, l := range final.find("LABEL") {
				labels = append(labels, strings.Fields(l)...)
			}
			if diff := setDiff("LABEL", labels, wantLabels); diff != "" {
				errorf("%s", diff)
			}
			for _, arg := range []string{commitVar, versionVar} {
				if _, ok := final.args[arg]; !ok {
					errorf("the image stage does not declare ARG %s for its label", arg)
				}
			}
		})
	}
}
