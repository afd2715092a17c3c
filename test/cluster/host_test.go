package cluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	before := Snapshot{
		Sysctls: map[string]string{"vm.overcommit_memory": "0"},
		Paths:   []string{"/run/netns"},
		Mounts:  []string{"/", "/proc"},
		Links:   []string{"lo", "eth0"},
	}
	tests := []struct {
		name  string
		after func(s *Snapshot)
		want  []string
	}{
		{name: "same", after: func(*Snapshot) {}},
		{name: "sysctl left changed", after: func(s *Snapshot) { s.Sysctls = map[string]string{"vm.overcommit_memory": "1"} },
			want: []string{"sysctl vm.overcommit_memory: 0 before, 1 after"}},
		{name: "paths left behind", after: func(s *Snapshot) { s.Paths = []string{KubeletRoot, "/run/netns", "/run/netns/cni-1"} },
			want: []string{"host path /run/netns/cni-1: left behind (1)", "host path /var/lib/kubelet: left behind (1)"}},
		{name: "mount stacked twice", after: func(s *Snapshot) { s.Mounts = []string{"/", "/proc", "/proc"} },
			want: []string{"mount /proc: left behind (1)"}},
		{name: "bridge left, eth0 gone", after: func(s *Snapshot) { s.Links = []string{"lo", Bridge} },
			want: []string{"network link accel0: left behind (1)", "network link eth0: gone (1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := json.Marshal(before)
			var after Snapshot
			if err := json.Unmarshal(b, &after); err != nil {
				t.Fatal(err)
			}
			tt.after(&after)
			got := Diff(before, after)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Diff = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConfigs(t *testing.T) {
	l := layout{dir: t.TempDir()}
	if err := writeConfigs(l); err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []map[string]any `json:"plugins"`
	}
	conflist := l.path("cni", "net.d", "10-accelstack.conflist")
	if err := json.Unmarshal([]byte(mustRead(t, conflist)), &conf); err != nil {
		t.Fatalf("%s: %v", conflist, err)
	}
	if len(conf.Plugins) != 2 || conf.Plugins[0]["bridge"] != Bridge || conf.Plugins[0]["isGateway"] != true {
		t.Errorf("CNI plugins = %v, want the %s gateway bridge then loopback", conf.Plugins, Bridge)
	}
	for file, wants := range map[string][]string{
		l.path("kubelet.yaml"):    {"address: " + GatewayIP, "cgroupDriver: cgroupfs", "makeIPTablesUtilChains: false", "unix://" + l.containerdSocket(), "clusterDNS: [" + GatewayIP + "]"},
		l.path("containerd.toml"): {"restrict_oom_score_adj = true", `sandbox_image = "` + PauseImage + `"`, "SystemdCgroup = false"},
	} {
		got := mustRead(t, file)
		for _, w := range wants {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q", file, w)
			}
		}
	}
}

func TestForeignOf(t *testing.T) {
	// 1 init; 10 this e2e binary with its daemon 11 and grandchild 12;
	// 20 another package's test binary with its etcd 21 and that etcd's
	// child 22; 30 a shell with a child 31 of its own.
	parent := map[int]int{10: 1, 11: 10, 12: 11, 20: 1, 21: 20, 22: 21, 30: 1, 31: 30}
	testBinary := map[int]bool{10: true, 20: true}
	got := foreignOf(parent, testBinary, 10)
	want := map[int]bool{20: true, 21: true, 22: true}
	if len(got) != len(want) {
		t.Fatalf("foreign = %v, want %v", got, want)
	}
	for pid := range want {
		if !got[pid] {
			t.Errorf("pid %d is not foreign; foreign = %v", pid, got)
		}
	}
}

func TestForeignTestsFindsThisProcessNot(t *testing.T) {
	// This test binary is itself a *.test process: it must never count
	// itself as foreign, or a cluster it started would be hidden.
	if foreignTests()[os.Getpid()] {
		t.Fatal("the running test binary counts itself as foreign")
	}
}

func TestIsTestTempMount(t *testing.T) {
	tmp := os.TempDir()
	for path, want := range map[string]bool{
		filepath.Join(tmp, "TestCSIReadOnlyrclone739827807", "002", "staging-1"): true,
		filepath.Join(tmp, "accelstack-e2e"):                                     false,
		"/var/lib/kubelet/pods/x/volumes/kubernetes.io~csi/pv/mount":             false,
		"/tmp2/TestX":                    false,
		filepath.Join(tmp, "..", "Test"): false,
		"/":                              false,
	} {
		if got := isTestTempMount(path); got != want {
			t.Errorf("isTestTempMount(%q) = %v, want %v", path, got, want)
		}
	}
}
