package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/unixsock"
)

// registerTimeout bounds the Register call to the kubelet.
const registerTimeout = 5 * time.Second

// server is the gRPC device-plugin server of one resource.
type server struct {
	pluginapi.UnimplementedDevicePluginServer

	res         Resource
	socket      string // full path of the plugin socket
	kubeletSock string
	logger      klog.Logger
	// registerTimeout bounds the Register call; 0 means registerTimeout.
	registerTimeout time.Duration

	grpc *grpc.Server
	stop chan struct{}
	done sync.WaitGroup

	mu       sync.Mutex
	watchers map[chan struct{}]struct{}
}

var _ pluginapi.DevicePluginServer = (*server)(nil)

func newServer(res Resource, pluginDir, kubeletSock string, logger klog.Logger) *server {
	return &server{
		res:         res,
		socket:      filepath.Join(pluginDir, SocketName(res.Name())),
		kubeletSock: kubeletSock,
		logger:      klog.LoggerWithValues(logger, "resource", res.Name()),
		watchers:    map[chan struct{}]struct{}{},
	}
}

// start serves the plugin socket and registers it with the kubelet.
func (s *server) start(ctx context.Context) error {
	l, err := unixsock.Listen(s.socket)
	if err != nil {
		return err
	}
	s.grpc = grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(s.grpc, s)
	s.stop = make(chan struct{})
	s.done.Add(2)
	go func() {
		defer s.done.Done()
		if err := s.grpc.Serve(l); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.logger.Error(err, "Device plugin server stopped")
		}
	}()
	go func() {
		defer s.done.Done()
		s.fanOut()
	}()
	if err := s.register(ctx); err != nil {
		s.shutdown()
		return err
	}
	s.logger.Info("Registered with the kubelet", "socket", s.socket, "devices", len(s.res.Devices()))
	return nil
}

// register calls Registration.Register on the kubelet socket.
func (s *server) register(ctx context.Context) error {
	// The kubelet's socket file appears (bind) a moment before it accepts
	// connections (listen): retry quickly instead of gRPC's default 1 s backoff.
	conn, err := grpc.NewClient("unix://"+s.kubeletSock,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 5 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 200 * time.Millisecond},
			MinConnectTimeout: time.Second,
		}))
	if err != nil {
		return fmt.Errorf("dialing kubelet at %s: %w", s.kubeletSock, err)
	}
	defer conn.Close()
	timeout := s.registerTimeout
	if timeout <= 0 {
		timeout = registerTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     filepath.Base(s.socket),
		ResourceName: s.res.Name(),
		Options:      s.options(),
	}, grpc.WaitForReady(true))
	if err != nil {
		return fmt.Errorf("registering %s with the kubelet: %w", s.res.Name(), err)
	}
	return nil
}

// shutdown stops serving, ends all ListAndWatch streams and removes the socket.
func (s *server) shutdown() {
	if s.grpc == nil {
		return
	}
	close(s.stop)
	s.grpc.Stop()
	s.done.Wait()
	s.grpc = nil
	if err := os.Remove(s.socket); err != nil && !os.IsNotExist(err) {
		s.logger.Error(err, "Removing plugin socket", "socket", s.socket)
	}
}

// fanOut forwards the resource's change notifications to every stream.
func (s *server) fanOut() {
	for {
		select {
		case <-s.stop:
			return
		case <-s.res.Changes():
			s.mu.Lock()
			for w := range s.watchers {
				select {
				case w <- struct{}{}:
				default:
				}
			}
			s.mu.Unlock()
		}
	}
}

func (s *server) options() *pluginapi.DevicePluginOptions {
	return &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true}
}

// GetDevicePluginOptions returns the plugin's options.
func (s *server) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return s.options(), nil
}

// ListAndWatch sends the full device list now and after every change.
func (s *server) ListAndWatch(_ *pluginapi.Empty, stream pluginapi.DevicePlugin_ListAndWatchServer) error {
	w := make(chan struct{}, 1)
	s.mu.Lock()
	s.watchers[w] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.watchers, w)
		s.mu.Unlock()
	}()
	for {
		devs := s.res.Devices()
		if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
			return err
		}
		s.logger.V(2).Info("Sent device list", "devices", len(devs), "unhealthy", countUnhealthy(devs))
		select {
		case <-w:
		case <-s.stop:
			return nil
		case <-stream.Context().Done():
			return nil
		}
	}
}

func countUnhealthy(devs []*pluginapi.Device) int {
	n := 0
	for _, d := range devs {
		if d.Health != pluginapi.Healthy {
			n++
		}
	}
	return n
}

// GetPreferredAllocation asks the resource for each container request.
func (s *server) GetPreferredAllocation(ctx context.Context, req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	resp := &pluginapi.PreferredAllocationResponse{}
	for _, cr := range req.GetContainerRequests() {
		ids, err := s.res.GetPreferredAllocation(ctx, cr.GetAvailableDeviceIDs(), cr.GetMustIncludeDeviceIDs(), int(cr.GetAllocationSize()))
		if err != nil {
			return nil, err
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: ids})
	}
	return resp, nil
}

// Allocate asks the resource for each container request.
func (s *server) Allocate(ctx context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	if len(req.GetContainerRequests()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "allocate request has no container requests")
	}
	resp := &pluginapi.AllocateResponse{}
	for _, cr := range req.GetContainerRequests() {
		car, err := s.res.Allocate(ctx, cr.GetDevicesIds())
		if err != nil {
			s.logger.Info("Refused allocation", "ids", cr.GetDevicesIds(), "err", err.Error())
			if _, ok := status.FromError(err); !ok {
				err = status.Error(codes.Internal, err.Error())
			}
			return nil, err
		}
		s.logger.V(3).Info("Allocated", "ids", cr.GetDevicesIds())
		resp.ContainerResponses = append(resp.ContainerResponses, car)
	}
	return resp, nil
}

// PreStartContainer does nothing; the plugin does not ask for it.
func (s *server) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}
