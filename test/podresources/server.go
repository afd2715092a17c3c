// Package podresources is a fake kubelet PodResources API v1 server on a
// real unix socket, for tests of anything that attributes devices to pods.
package podresources

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Server answers List with the pods it was given, or with an error.
type Server struct {
	podresourcesv1.UnimplementedPodResourcesListerServer

	path string
	srv  *grpc.Server
	done chan struct{}

	mu    sync.Mutex
	pods  []*podresourcesv1.PodResources
	err   error
	calls int
}

// Start serves on a socket kubelet.sock in a new temp dir and stops when
// the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := New(filepath.Join(t.TempDir(), "kubelet.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// New serves on the unix socket at path, replacing a stale socket file.
func New(path string) (*Server, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("removing stale socket: %w", err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	s := &Server{path: path, srv: grpc.NewServer(), done: make(chan struct{})}
	podresourcesv1.RegisterPodResourcesListerServer(s.srv, s)
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(l)
	}()
	return s, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Stop stops serving and removes the socket.
func (s *Server) Stop() {
	s.srv.Stop()
	<-s.done
	_ = os.Remove(s.path)
}

// SetPods replaces the pods List returns and clears any error.
func (s *Server) SetPods(pods ...*podresourcesv1.PodResources) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods, s.err = pods, nil
}

// SetError makes List fail with err (a gRPC status error if it is one,
// else codes.Unavailable); nil restores the pods.
func (s *Server) SetError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// Calls returns how many List calls were served.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// List returns the pods set with SetPods.
func (s *Server) List(context.Context, *podresourcesv1.ListPodResourcesRequest) (*podresourcesv1.ListPodResourcesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.err != nil {
		if _, ok := status.FromError(s.err); ok {
			return nil, s.err
		}
		return nil, status.Error(codes.Unavailable, s.err.Error())
	}
	return &podresourcesv1.ListPodResourcesResponse{PodResources: s.pods}, nil
}

// Pod builds a pod's entry.
func Pod(namespace, name string, containers ...*podresourcesv1.ContainerResources) *podresourcesv1.PodResources {
	return &podresourcesv1.PodResources{Namespace: namespace, Name: name, Containers: containers}
}

// Container builds a container's entry.
func Container(name string, devices ...*podresourcesv1.ContainerDevices) *podresourcesv1.ContainerResources {
	return &podresourcesv1.ContainerResources{Name: name, Devices: devices}
}

// Devices builds the devices of one resource.
func Devices(resource string, ids ...string) *podresourcesv1.ContainerDevices {
	return &podresourcesv1.ContainerDevices{ResourceName: resource, DeviceIds: ids}
}
