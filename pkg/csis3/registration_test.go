package csis3

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/testing/protocmp"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// TestPluginRegistration runs the driver on real unix sockets and calls
// its registration socket the way the kubelet's plugin watcher does.
func TestPluginRegistration(t *testing.T) {
	testCases := []struct {
		name string
		mode string
		// register sets --plugin-registration-dir.
		register bool
		// kubeletPath is --kubelet-registration-path.
		kubeletPath string
		// stale leaves a file where the socket goes.
		stale        bool
		wantEndpoint string
	}{
		{name: "node", mode: ModeNode, register: true,
			wantEndpoint: "/var/lib/kubelet/plugins/test.csi.example/csi.sock"},
		{name: "all stale", mode: ModeAll, register: true, stale: true,
			kubeletPath: "/var/lib/kubelet/plugins/other/csi.sock", wantEndpoint: "/var/lib/kubelet/plugins/other/csi.sock"},
		{name: "off", mode: ModeNode},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			// Unix socket paths are short (108 bytes); t.TempDir's are long.
			dir, err := os.MkdirTemp("", "csireg")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			sock := filepath.Join(dir, "csi.sock")
			regDir := filepath.Join(dir, "reg")
			if err := os.Mkdir(regDir, 0o755); err != nil {
				t.Fatal(err)
			}
			regSock := filepath.Join(regDir, "test.csi.example-reg.sock")
			cfg := DefaultConfig()
			cfg.DriverName, cfg.NodeID, cfg.Mode, cfg.Endpoint = "test.csi.example", "n1", tc.mode, "unix://"+sock
			cfg.StateDir = filepath.Join(t.TempDir(), "state")
			cfg.KubeletRegistrationPath = tc.kubeletPath
			if tc.register {
				cfg.PluginRegistrationDir = regDir
			}
			if tc.stale {
				if err := os.WriteFile(regSock, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- d.Run(ctx) }()
			callCtx, callCancel := context.WithTimeout(ctx, 10*time.Second)
			defer callCancel()

			// The registration socket exists before the CSI one serves.
			csiConn := dial(t, sock)
			if _, err := csipb.NewIdentityClient(csiConn).Probe(callCtx, &csipb.ProbeRequest{}, grpc.WaitForReady(true)); err != nil {
				select {
				case runErr := <-done:
					t.Fatalf("Probe: %v; Run returned %v", err, runErr)
				default:
					t.Fatalf("Probe: %v", err)
				}
			}
			st, err := os.Stat(regSock)
			if !tc.register {
				if err == nil {
					t.Fatalf("registration socket %s exists without --plugin-registration-dir", regSock)
				}
				if entries, _ := os.ReadDir(regDir); len(entries) != 0 {
					t.Errorf("registration dir holds %v, want nothing", entries)
				}
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Run = %v after cancel, want nil", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Type() != os.ModeSocket || st.Mode().Perm() != 0o600 {
				t.Errorf("registration socket mode = %v, want a 0600 socket", st.Mode())
			}

			reg := registerapi.NewRegistrationClient(dial(t, regSock))
			info, err := reg.GetInfo(callCtx, &registerapi.InfoRequest{})
			if err != nil {
				t.Fatalf("GetInfo: %v", err)
			}
			want := &registerapi.PluginInfo{
				Type: registerapi.CSIPlugin, Name: "test.csi.example",
				Endpoint: tc.wantEndpoint, SupportedVersions: []string{"1.0.0"},
			}
			if diff := cmp.Diff(want, info, protocmp.Transform()); diff != "" {
				t.Errorf("GetInfo (-want +got):\n%s", diff)
			}
			for _, st := range []*registerapi.RegistrationStatus{
				{PluginRegistered: true},
				{PluginRegistered: false, Error: "plugin version mismatch"},
			} {
				if _, err := reg.NotifyRegistrationStatus(callCtx, st); err != nil {
					t.Errorf("NotifyRegistrationStatus(%v) = %v, want nil", st, err)
				}
			}

			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run = %v after cancel, want nil", err)
			}
			if _, err := os.Stat(regSock); !os.IsNotExist(err) {
				t.Errorf("registration socket still present after stop: %v", err)
			}
		})
	}
}

// dial connects to a unix socket.
func dial(t *testing.T, path string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
