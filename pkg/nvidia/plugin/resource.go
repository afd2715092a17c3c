package plugin

import (
	"context"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/pkg/nvidia"
)

// resource is one NVIDIA extended resource served through pkg/deviceplugin.
type resource struct {
	spec     *resourceSpec
	byID     map[string]*advertised
	settings nvidia.Settings
	devRoot  string
	nvlink   [][]bool
	health   *healthMonitor
	changes  chan struct{}
}

var _ deviceplugin.Resource = (*resource)(nil)

func newResource(spec *resourceSpec, m *nvidia.Machine, s nvidia.Settings, devRoot string, h *healthMonitor) *resource {
	r := &resource{
		spec: spec, byID: map[string]*advertised{}, settings: s, devRoot: devRoot,
		nvlink: m.NVLink, health: h, changes: make(chan struct{}, 1),
	}
	for i := range spec.devices {
		r.byID[spec.devices[i].id] = &spec.devices[i]
	}
	h.subscribe(func() {
		select {
		case r.changes <- struct{}{}:
		default:
		}
	})
	return r
}

// Name returns the resource name.
func (r *resource) Name() string { return r.spec.name }

// Changes signals health changes.
func (r *resource) Changes() <-chan struct{} { return r.changes }

// Devices returns the advertised IDs with health and NUMA node.
func (r *resource) Devices() []*pluginapi.Device {
	out := make([]*pluginapi.Device, 0, len(r.spec.devices))
	for _, a := range r.spec.devices {
		d := &pluginapi.Device{ID: a.id, Health: pluginapi.Healthy}
		if !r.health.healthy(a.dev.UUID) {
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
func (r *resource) Allocate(_ context.Context, ids []string) (*pluginapi.ContainerAllocateResponse, error) {
	devs, err := validateRequest(r.spec, r.byID, ids)
	if err != nil {
		return nil, err
	}
	return containerResponse(devs, r.settings, r.devRoot), nil
}

// GetPreferredAllocation picks devices topology-aware.
func (r *resource) GetPreferredAllocation(_ context.Context, available, mustInclude []string, size int) ([]string, error) {
	return preferred(r.spec, r.byID, r.nvlink, r.settings.SharedPolicy, available, mustInclude, size)
}
