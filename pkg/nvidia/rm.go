package nvidia

import (
	"context"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/deviceplugin"
)

// resourceManager serves one NVIDIA resource to pkg/deviceplugin.
type resourceManager struct {
	spec     *resourceSpec
	byID     map[string]*advertised
	settings Settings
	devRoot  string
	nvlink   [][]bool
	health   *healthMonitor
	changes  chan struct{}
}

var _ deviceplugin.ResourceManager = (*resourceManager)(nil)

func newResourceManager(spec *resourceSpec, m *Machine, s Settings, devRoot string, h *healthMonitor) *resourceManager {
	rm := &resourceManager{
		spec: spec, byID: map[string]*advertised{}, settings: s, devRoot: devRoot,
		nvlink: m.NVLink, health: h, changes: make(chan struct{}, 1),
	}
	for i := range spec.devices {
		rm.byID[spec.devices[i].id] = &spec.devices[i]
	}
	h.subscribe(func() {
		select {
		case rm.changes <- struct{}{}:
		default:
		}
	})
	return rm
}

// Resource returns the resource name.
func (rm *resourceManager) Resource() string { return rm.spec.name }

// Changes signals health changes.
func (rm *resourceManager) Changes() <-chan struct{} { return rm.changes }

// Devices returns the advertised IDs with health and NUMA node.
func (rm *resourceManager) Devices() []*pluginapi.Device {
	out := make([]*pluginapi.Device, 0, len(rm.spec.devices))
	for _, a := range rm.spec.devices {
		d := &pluginapi.Device{ID: a.id, Health: pluginapi.Healthy}
		if !rm.health.healthy(a.dev.UUID) {
			d.Health = pluginapi.Unhealthy
		}
		if a.dev.NUMANode >= 0 {
			d.Topology = &pluginapi.TopologyInfo{Nodes: []*pluginapi.NUMANode{{ID: int64(a.dev.NUMANode)}}}
		}
		out = append(out, d)
	}
	return out
}

// Allocate validates the IDs and returns the container settings.
func (rm *resourceManager) Allocate(_ context.Context, ids []string) (*pluginapi.ContainerAllocateResponse, error) {
	devs, err := validateRequest(rm.spec, rm.byID, ids)
	if err != nil {
		return nil, err
	}
	return containerResponse(devs, rm.settings, rm.devRoot), nil
}

// GetPreferredAllocation picks devices topology-aware.
func (rm *resourceManager) GetPreferredAllocation(_ context.Context, available, mustInclude []string, size int) ([]string, error) {
	return preferred(rm.spec, rm.byID, rm.nvlink, rm.settings.SharedPolicy, available, mustInclude, size)
}
