package reclaimtest

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/nodeagent"
	"github.com/accelstack/accelstack/pkg/nvidia"
	"github.com/accelstack/accelstack/pkg/nvidia/simulator"
)

// NodeAgent is the real node agent (pkg/nodeagent, as cmd/node-agent runs
// it with --backend=simulated) on a simulated DGX A100 whose GPUs the test
// gives to pods and sets the utilization of. It collects when told to.
type NodeAgent struct {
	// Sim is the simulated machine.
	Sim   *simulator.Simulator
	agent *nodeagent.Agent
	srv   *httptest.Server

	mu          sync.Mutex
	assignments []nodeagent.Assignment
}

// StartNodeAgent starts a node agent on a simulated dgxa100 (GPU i at 10×i
// % utilization until set), with no pod holding a GPU, and collects once.
func StartNodeAgent(t testing.TB) *NodeAgent {
	t.Helper()
	sim, err := simulator.New("dgxa100")
	if err != nil {
		t.Fatal(err)
	}
	n := &NodeAgent{Sim: sim}
	n.agent, err = nodeagent.New(context.Background(), nodeagent.Config{
		Backend: accelerator.BackendSimulated, Simulate: "dgxa100", Simulator: sim, PodLister: n, NodeName: "",
	})
	if err != nil {
		t.Fatal(err)
	}
	n.srv = httptest.NewServer(n.agent.Handler())
	t.Cleanup(func() {
		n.srv.Close()
		_ = n.agent.Collector().Close()
	})
	n.Collect()
	return n
}

// Addr is the host:port the agent's /metrics is served at.
func (n *NodeAgent) Addr() string { return strings.TrimPrefix(n.srv.URL, "http://") }

// GPU returns the UUID of GPU i.
func (n *NodeAgent) GPU(i int) string { return n.Sim.Devices[i].(*server.Device).UUID }

// Assign gives GPUs (by index) to a container of a pod, as the kubelet's
// PodResources API would report; call Collect to see it in the metrics.
func (n *NodeAgent) Assign(namespace, pod, container string, gpus ...int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	a := nodeagent.Assignment{Owner: nodeagent.Owner{Namespace: namespace, Pod: pod, Container: container}, Resource: accelerator.NVIDIAGPU}
	for _, i := range gpus {
		a.DeviceIDs = append(a.DeviceIDs, n.GPU(i))
	}
	n.assignments = append(n.assignments, a)
}

// SetUtilization sets the utilization of GPU i in percent; call Collect to
// see it in the metrics.
func (n *NodeAgent) SetUtilization(i int, percent uint32) {
	n.Sim.SetStats(n.GPU(i), nvidia.Stats{GPUUtilization: percent, TemperatureC: 40, PowerMilliwatts: 60000, SMClockMHz: 1410, MemoryClockMHz: 1215})
}

// Collect makes the agent read the machine and the assignments, as it does
// every --collect-interval.
func (n *NodeAgent) Collect() {
	n.agent.Collector().CollectOnce(context.Background())
}

// List is the agent's PodLister: the assignments so far.
func (n *NodeAgent) List(context.Context) ([]nodeagent.Assignment, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]nodeagent.Assignment(nil), n.assignments...), nil
}
