package csis3

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/mount-utils"
)

func TestConfigValidate(t *testing.T) {
	valid := DefaultConfig()
	valid.Mode, valid.NodeID = ModeNode, "n1"
	testCases := []struct {
		name    string
		mutate  func(*Config)
		wantErr string
	}{
		{name: "valid", mutate: func(*Config) {}},
		{name: "controller needs no node id", mutate: func(c *Config) { c.Mode, c.NodeID = ModeController, "" }},
		{name: "bad mode", mutate: func(c *Config) { c.Mode = "both" }, wantErr: "--mode"},
		{name: "node without id", mutate: func(c *Config) { c.NodeID = "" }, wantErr: "--node-id"},
		{name: "tcp endpoint", mutate: func(c *Config) { c.Endpoint = "tcp://127.0.0.1:10000" }, wantErr: "--endpoint"},
		{name: "relative socket", mutate: func(c *Config) { c.Endpoint = "unix://csi.sock" }, wantErr: "absolute"},
		{name: "empty driver name", mutate: func(c *Config) { c.DriverName = "" }, wantErr: "--driver-name"},
		{name: "node without state dir", mutate: func(c *Config) { c.StateDir = "" }, wantErr: "--state-dir"},
		{name: "unknown mounter", mutate: func(c *Config) { c.DefaultMounter = "goofys" }, wantErr: "--default-mounter"},
		{name: "bad systemd", mutate: func(c *Config) { c.Systemd = "maybe" }, wantErr: "--systemd"},
		{name: "zero mount timeout", mutate: func(c *Config) { c.MountTimeout = 0 }, wantErr: "--mount-timeout"},
		{name: "registration", mutate: func(c *Config) {
			c.PluginRegistrationDir, c.KubeletRegistrationPath = "/registration", "/var/lib/kubelet/plugins/x/csi.sock"
		}},
		{name: "registration in controller mode", mutate: func(c *Config) { c.Mode, c.PluginRegistrationDir = ModeController, "/registration" }, wantErr: "--plugin-registration-dir"},
		{name: "relative registration dir", mutate: func(c *Config) { c.PluginRegistrationDir = "registration" }, wantErr: "--plugin-registration-dir"},
		{name: "relative kubelet registration path", mutate: func(c *Config) { c.KubeletRegistrationPath = "csi.sock" }, wantErr: "--kubelet-registration-path"},
		{name: "daemon memory max", mutate: func(c *Config) { c.DaemonMemoryMax = "2G" }},
		{name: "bad daemon memory max", mutate: func(c *Config) { c.DaemonMemoryMax = "2G\nExecStart=/bin/sh" }, wantErr: "--daemon-memory-max"},
		{name: "relative daemon cgroup root", mutate: func(c *Config) { c.DaemonCgroupRoot = "sys/fs/cgroup" }, wantErr: "--daemon-cgroup-root"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid
			tc.mutate(&cfg)
			err := cfg.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestIdentityOverUnixSocket serves the driver on a real unix socket and
// calls it the way the kubelet and the CSI sidecars do.
func TestIdentityOverUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "plugin", "csi.sock")
	cfg := DefaultConfig()
	cfg.DriverName, cfg.Version, cfg.NodeID, cfg.Endpoint = "test.csi.example", "v9", "n1", "unix://"+sock
	cfg.StateDir = filepath.Join(t.TempDir(), "state")
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	id := csipb.NewIdentityClient(conn)
	callCtx, callCancel := context.WithTimeout(ctx, 10*time.Second)
	defer callCancel()

	info, err := id.GetPluginInfo(callCtx, &csipb.GetPluginInfoRequest{}, grpc.WaitForReady(true))
	if err != nil {
		t.Fatalf("GetPluginInfo: %v", err)
	}
	if info.GetName() != "test.csi.example" || info.GetVendorVersion() != "v9" {
		t.Errorf("GetPluginInfo = %v, want test.csi.example v9", info)
	}
	probe, err := id.Probe(callCtx, &csipb.ProbeRequest{})
	if err != nil || !probe.GetReady().GetValue() {
		t.Errorf("Probe = %v, %v; want ready", probe, err)
	}
	caps, err := id.GetPluginCapabilities(callCtx, &csipb.GetPluginCapabilitiesRequest{})
	if err != nil || len(caps.GetCapabilities()) != 1 ||
		caps.GetCapabilities()[0].GetService().GetType() != csipb.PluginCapability_Service_CONTROLLER_SERVICE {
		t.Errorf("GetPluginCapabilities = %v, %v; want CONTROLLER_SERVICE", caps, err)
	}

	st, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm&0o007 != 0 {
		t.Errorf("socket mode = %v, want no access for others", perm)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run returned %v after cancel, want nil", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket still present after stop: %v", err)
	}
}

// blockingLauncher's Start reports that it was called, then blocks until
// released; its daemons are never alive.
type blockingLauncher struct {
	started chan string
	release chan struct{}
}

func (l blockingLauncher) Start(name string, _ Command, _, _ string) (Daemon, error) {
	l.started <- name
	<-l.release
	return Daemon{}, errors.New("released")
}

func (blockingLauncher) Alive(Daemon) bool { return false }

func (blockingLauncher) Stop(Daemon, time.Duration) error { return nil }

// TestRunServesWhileHealing starts the driver with a dead volume whose
// remount blocks: the socket answers while the remount is under way, and
// the record of a volume whose staging path is gone is dropped.
func TestRunServesWhileHealing(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "csi.sock")
	cfg := DefaultConfig()
	cfg.NodeID, cfg.Endpoint, cfg.StateDir = "n1", "unix://"+sock, filepath.Join(dir, "state")
	st := stateStore{root: cfg.StateDir}
	staging := filepath.Join(dir, "staging")
	if err := os.Mkdir(staging, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, rec := range []*stageRecord{
		{VolumeID: "dead", StagingPath: staging, Volume: Volume{ID: "dead", Mounter: MounterRclone}, Daemon: Daemon{PID: 1 << 30}},
		{VolumeID: "gone", StagingPath: filepath.Join(dir, "gone"), Volume: Volume{ID: "gone", Mounter: MounterRclone}, Daemon: Daemon{PID: 1 << 30}},
	} {
		if err := st.put(rec); err != nil {
			t.Fatal(err)
		}
	}
	l := blockingLauncher{started: make(chan string, 1), release: make(chan struct{})}
	fm := mount.NewFakeMounter(nil)
	d := &Driver{cfg: cfg, mounter: fm, lazyUnmount: fm.Unmount, launcher: l}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	if name := <-l.started; name != st.unitSuffix("dead") {
		t.Fatalf("healing started %s, want the dead volume's daemon", name)
	}
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	callCtx, callCancel := context.WithTimeout(ctx, time.Minute)
	defer callCancel()
	probe, err := csipb.NewIdentityClient(conn).Probe(callCtx, &csipb.ProbeRequest{}, grpc.WaitForReady(true))
	if err != nil || !probe.GetReady().GetValue() {
		t.Errorf("Probe while a remount is under way = %v, %v; want ready", probe, err)
	}
	if _, err := csipb.NewNodeClient(conn).NodeGetInfo(callCtx, &csipb.NodeGetInfoRequest{}); err != nil {
		t.Errorf("NodeGetInfo while a remount is under way: %v", err)
	}
	close(l.release)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run() = %v after cancel, want nil", err)
	}
	if rec, err := st.get("gone"); err != nil || rec != nil {
		t.Errorf("record of a volume whose staging path is gone = %+v, %v; want dropped", rec, err)
	}
	if rec, err := st.get("dead"); err != nil || rec == nil {
		t.Errorf("record of the dead volume = %+v, %v; want kept", rec, err)
	}
}
