// Package kubelet is a fake kubelet for device-plugin tests, built only from
// k8s.io/kubelet's generated gRPC code over real unix sockets. It runs the
// Registration server on <dir>/kubelet.sock, checks each registration like
// the kubelet (API version, extended resource name, endpoint socket),
// dials the plugin back, consumes ListAndWatch, and calls
// GetPreferredAllocation and Allocate as the kubelet's device manager does.
// Restart simulates a kubelet restart: plugin sockets wiped, kubelet.sock
// re-created.
package kubelet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// checkpointFile survives a restart, as in the real kubelet.
const checkpointFile = "kubelet_internal_checkpoint"

// Kubelet is the fake kubelet.
type Kubelet struct {
	pluginapi.UnimplementedRegistrationServer

	dir  string
	sock string

	mu         sync.Mutex
	srv        *grpc.Server
	serveDone  chan struct{}
	plugins    map[string]*Plugin
	changed    chan struct{} // closed and replaced on every state change
	generation int
	registered []Registration
	refused    []Registration
	hook       RegisterHook
}

// RegisterHook runs at the start of each Register call. A non-nil error is
// the kubelet's answer and nothing is registered; it may block (a slow
// kubelet) until ctx ends, which the plugin's own timeout does.
type RegisterHook func(ctx context.Context, req *pluginapi.RegisterRequest) error

// SetRegisterHook sets the hook for later Register calls; nil removes it.
func (k *Kubelet) SetRegisterHook(h RegisterHook) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.hook = h
}

// Refused returns every Register call refused by the hook so far.
func (k *Kubelet) Refused() []Registration {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]Registration{}, k.refused...)
}

// Registration records one successful Register call.
type Registration struct {
	Resource   string
	Generation int
	At         time.Time
}

// Plugin is the kubelet's view of one registered plugin.
type Plugin struct {
	// Resource is the registered extended resource name.
	Resource string
	// Endpoint is the plugin's socket name in the directory.
	Endpoint string
	// Options are the options sent at registration.
	Options *pluginapi.DevicePluginOptions

	k      *Kubelet
	conn   *grpc.ClientConn
	client pluginapi.DevicePluginClient
	cancel context.CancelFunc
	done   chan struct{}

	devices   []*pluginapi.Device
	updates   int
	updated   time.Time
	history   [][]*pluginapi.Device
	streamErr error
}

// Start runs a fake kubelet in dir, creating kubelet.sock.
func Start(dir string) (*Kubelet, error) {
	k := &Kubelet{dir: dir, sock: filepath.Join(dir, "kubelet.sock"), plugins: map[string]*Plugin{}, changed: make(chan struct{})}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	if err := k.serve(); err != nil {
		return nil, err
	}
	return k, nil
}

// Dir returns the device-plugin directory.
func (k *Kubelet) Dir() string { return k.dir }

func (k *Kubelet) serve() error {
	_ = os.Remove(k.sock)
	l, err := net.Listen("unix", k.sock)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", k.sock, err)
	}
	srv := grpc.NewServer()
	pluginapi.RegisterRegistrationServer(srv, k)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	k.mu.Lock()
	k.srv, k.serveDone = srv, done
	k.mu.Unlock()
	return nil
}

// Register implements the kubelet's Registration service.
func (k *Kubelet) Register(ctx context.Context, req *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	k.mu.Lock()
	hook := k.hook
	k.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, req); err != nil {
			k.mu.Lock()
			k.refused = append(k.refused, Registration{Resource: req.ResourceName, Generation: k.generation, At: time.Now()})
			k.broadcastLocked()
			k.mu.Unlock()
			return nil, err
		}
	}
	if req.Version != pluginapi.Version {
		return nil, status.Errorf(codes.InvalidArgument, "unsupported API version %q", req.Version)
	}
	domain, name, ok := strings.Cut(req.ResourceName, "/")
	if !ok || domain == "" || name == "" || domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io") {
		return nil, status.Errorf(codes.InvalidArgument, "invalid extended resource name %q", req.ResourceName)
	}
	if strings.Contains(req.Endpoint, "/") {
		return nil, status.Errorf(codes.InvalidArgument, "endpoint %q must be a file name in the plugin directory", req.Endpoint)
	}
	path := filepath.Join(k.dir, req.Endpoint)
	if fi, err := os.Stat(path); err != nil || fi.Mode()&os.ModeSocket == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "endpoint %q is not a socket", req.Endpoint)
	}
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "dialing plugin: %v", err)
	}
	p := &Plugin{Resource: req.ResourceName, Endpoint: req.Endpoint, Options: req.Options, k: k, conn: conn,
		client: pluginapi.NewDevicePluginClient(conn), done: make(chan struct{})}
	sctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	stream, err := p.client.ListAndWatch(sctx, &pluginapi.Empty{})
	if err != nil {
		cancel()
		conn.Close()
		return nil, status.Errorf(codes.Unavailable, "ListAndWatch: %v", err)
	}
	k.mu.Lock()
	if old := k.plugins[req.ResourceName]; old != nil {
		defer old.close()
	}
	k.plugins[req.ResourceName] = p
	k.registered = append(k.registered, Registration{Resource: req.ResourceName, Generation: k.generation, At: time.Now()})
	k.broadcastLocked()
	k.mu.Unlock()
	go p.watch(stream)
	return &pluginapi.Empty{}, nil
}

func (k *Kubelet) broadcastLocked() {
	close(k.changed)
	k.changed = make(chan struct{})
}

// wait blocks until cond (called with k.mu held) is true or ctx ends.
func (k *Kubelet) wait(ctx context.Context, cond func() bool) error {
	for {
		k.mu.Lock()
		ok := cond()
		ch := k.changed
		k.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *Plugin) watch(stream pluginapi.DevicePlugin_ListAndWatchClient) {
	defer close(p.done)
	for {
		resp, err := stream.Recv()
		p.k.mu.Lock()
		if err != nil {
			p.streamErr = err
			p.k.broadcastLocked()
			p.k.mu.Unlock()
			return
		}
		p.devices = resp.Devices
		p.history = append(p.history, resp.Devices)
		p.updates++
		p.updated = time.Now()
		p.k.broadcastLocked()
		p.k.mu.Unlock()
	}
}

func (p *Plugin) close() {
	p.cancel()
	p.conn.Close()
	<-p.done
}

// WaitPlugin waits until resource is registered in the current generation
// and has sent its first device list.
func (k *Kubelet) WaitPlugin(ctx context.Context, resource string) (*Plugin, error) {
	var p *Plugin
	err := k.wait(ctx, func() bool {
		p = k.plugins[resource]
		return p != nil && p.updates > 0
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for %s to register: %w (registered: %v)", resource, err, k.Resources())
	}
	return p, nil
}

// Resources lists the registered resource names.
func (k *Kubelet) Resources() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for r := range k.plugins {
		out = append(out, r)
	}
	return out
}

// Registrations returns every registration so far.
func (k *Kubelet) Registrations() []Registration {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]Registration{}, k.registered...)
}

// Devices returns the latest device list.
func (p *Plugin) Devices() []*pluginapi.Device {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	return p.devices
}

// WaitDevices waits until the latest device list satisfies cond and
// returns it with the time it arrived.
func (p *Plugin) WaitDevices(ctx context.Context, cond func([]*pluginapi.Device) bool) ([]*pluginapi.Device, time.Time, error) {
	var devs []*pluginapi.Device
	var at time.Time
	err := p.k.wait(ctx, func() bool {
		devs, at = p.devices, p.updated
		return cond(devs)
	})
	return devs, at, err
}

// WaitSeen waits until some device list received so far, the latest or
// an earlier one, satisfies cond and returns it. Unlike WaitDevices it
// cannot miss a state the plugin sent and left again before the wait
// looked.
func (p *Plugin) WaitSeen(ctx context.Context, cond func([]*pluginapi.Device) bool) ([]*pluginapi.Device, error) {
	var found []*pluginapi.Device
	err := p.k.wait(ctx, func() bool {
		for _, devs := range p.history {
			if cond(devs) {
				found = devs
				return true
			}
		}
		return false
	})
	return found, err
}

// History returns every device list received, oldest first.
func (p *Plugin) History() [][]*pluginapi.Device {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	return append([][]*pluginapi.Device{}, p.history...)
}

// Allocate calls Allocate with one container request per id list.
func (p *Plugin) Allocate(ctx context.Context, ids ...[]string) (*pluginapi.AllocateResponse, error) {
	req := &pluginapi.AllocateRequest{}
	for _, l := range ids {
		req.ContainerRequests = append(req.ContainerRequests, &pluginapi.ContainerAllocateRequest{DevicesIds: l})
	}
	return p.client.Allocate(ctx, req)
}

// GetPreferredAllocation asks for size devices out of available.
func (p *Plugin) GetPreferredAllocation(ctx context.Context, available, mustInclude []string, size int) ([]string, error) {
	resp, err := p.client.GetPreferredAllocation(ctx, &pluginapi.PreferredAllocationRequest{
		ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{
			AvailableDeviceIDs: available, MustIncludeDeviceIDs: mustInclude, AllocationSize: int32(size),
		}},
	})
	if err != nil {
		return nil, err
	}
	if len(resp.ContainerResponses) != 1 {
		return nil, fmt.Errorf("got %d container responses, want 1", len(resp.ContainerResponses))
	}
	return resp.ContainerResponses[0].DeviceIDs, nil
}

// Client returns the raw DevicePlugin client.
func (p *Plugin) Client() pluginapi.DevicePluginClient { return p.client }

// Restart simulates a kubelet restart: stop serving, drop the plugin
// connections, wipe every file but the checkpoint, and re-create
// kubelet.sock. It returns when kubelet.sock exists again.
func (k *Kubelet) Restart() error {
	k.stop()
	entries, err := os.ReadDir(k.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == checkpointFile {
			continue
		}
		if err := os.RemoveAll(filepath.Join(k.dir, e.Name())); err != nil {
			return err
		}
	}
	k.mu.Lock()
	k.generation++
	k.broadcastLocked()
	k.mu.Unlock()
	return k.serve()
}

func (k *Kubelet) stop() {
	k.mu.Lock()
	srv, done := k.srv, k.serveDone
	plugins := k.plugins
	k.plugins = map[string]*Plugin{}
	k.srv = nil
	k.mu.Unlock()
	if srv != nil {
		srv.Stop()
		<-done
	}
	for _, p := range plugins {
		p.close()
	}
}

// Stop stops the fake kubelet and removes kubelet.sock.
func (k *Kubelet) Stop() {
	k.stop()
	if err := os.Remove(k.sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return
	}
}
