package deviceplugin

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

func TestSocketName(t *testing.T) {
	testCases := []struct{ resource, want string }{
		{"nvidia.com/gpu", "nvidia-gpu.sock"},
		{"nvidia.com/gpu.shared", "nvidia-gpu.shared.sock"},
		{"nvidia.com/mig-1g.5gb", "nvidia-mig-1g.5gb.sock"},
		{"huawei.com/Ascend910", "huawei-Ascend910.sock"},
		{"noslash", "noslash.sock"},
	}
	for _, tc := range testCases {
		if got := SocketName(tc.resource); got != tc.want {
			t.Errorf("SocketName(%q) = %q, want %q", tc.resource, got, tc.want)
		}
	}
}

// failingVendor fails Start.
type failingVendor struct{ NullVendor }

func (failingVendor) Start(context.Context) ([]Resource, error) {
	return nil, errors.New("no library")
}

func TestRunInitFailure(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Vendor: "nvidia", PluginDir: dir, FailOnInitError: true}
	err := Run(context.Background(), cfg, failingVendor{NullVendor{VendorName: "nvidia"}})
	if err == nil || !strings.Contains(err.Error(), "starting nvidia devices: no library") {
		t.Fatalf("Run() = %v, want the init error", err)
	}
	// With FailOnInitError false it idles until the context ends.
	cfg.FailOnInitError = false
	ctx, cancel := context.WithCancel(context.Background())
	sup := NewSupervisor(cfg, failingVendor{NullVendor{VendorName: "nvidia"}})
	served := make(chan struct{}, 1)
	sup.Observe(func(e Event) {
		if e.Kind == EventServed {
			served <- struct{}{}
		}
	})
	done := make(chan error, 1)
	go func() { done <- sup.Run(ctx) }()
	select {
	case <-served:
	case <-time.After(time.Minute):
		t.Fatal("the idle plugin did not serve within a minute")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("idle Run() = %v, want nil", err)
	}
	if err := Run(context.Background(), Config{PluginDir: filepath.Join(dir, "missing")}, NullVendor{}); !errors.Is(err, errNoPluginDir) {
		t.Errorf("Run() with a missing plugin dir = %v, want errNoPluginDir", err)
	}
}

// plainErrResource returns an error without a gRPC code from Allocate.
type plainErrResource struct{}

func (plainErrResource) Name() string                 { return "example.com/dev" }
func (plainErrResource) Devices() []*pluginapi.Device { return nil }
func (plainErrResource) Changes() <-chan struct{}     { return nil }
func (plainErrResource) Allocate(context.Context, []string) (*pluginapi.ContainerAllocateResponse, error) {
	return nil, errors.New("boom")
}
func (plainErrResource) GetPreferredAllocation(context.Context, []string, []string, int) ([]string, error) {
	return nil, status.Error(codes.InvalidArgument, "bad")
}

func TestServerErrors(t *testing.T) {
	s := &server{res: plainErrResource{}, watchers: map[chan struct{}]struct{}{}}
	_, err := s.Allocate(context.Background(), &pluginapi.AllocateRequest{})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("empty Allocate = %v, want InvalidArgument", err)
	}
	_, err = s.Allocate(context.Background(), &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"a"}}}})
	if status.Code(err) != codes.Internal {
		t.Errorf("Allocate with a plain error = %v, want Internal", err)
	}
	_, err = s.GetPreferredAllocation(context.Background(), &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{}}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("GetPreferredAllocation = %v, want InvalidArgument", err)
	}
}
