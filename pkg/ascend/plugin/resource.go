package ascend

import (
	"context"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/deviceplugin"
)

// resourceManager serves one Ascend resource (one chip kind) to
// pkg/deviceplugin.
type resourceManager struct {
	resource string
	chips    []Chip
	byID     map[string]Chip
	health   *healthMonitor
	opts     Options
	changes  chan struct{}
}

var _ deviceplugin.ResourceManager = (*resourceManager)(nil)

func newResourceManager(resource string, chips []Chip, h *healthMonitor, o Options) *resourceManager {
	rm := &resourceManager{resource: resource, chips: chips, byID: map[string]Chip{}, health: h, opts: o,
		changes: make(chan struct{}, 1)}
	for _, c := range chips {
		rm.byID[c.ID()] = c
	}
	h.subscribe(func() {
		select {
		case rm.changes <- struct{}{}:
		default:
		}
	})
	return rm
}

// Resource returns the resource name, e.g. huawei.com/Ascend910.
func (rm *resourceManager) Resource() string { return rm.resource }

// Changes signals health changes.
func (rm *resourceManager) Changes() <-chan struct{} { return rm.changes }

// Devices returns every chip with its health; unhealthy and
// network-unhealthy chips are Unhealthy.
func (rm *resourceManager) Devices() []*pluginapi.Device {
	out := make([]*pluginapi.Device, 0, len(rm.chips))
	for _, c := range rm.chips {
		d := &pluginapi.Device{ID: c.ID(), Health: pluginapi.Healthy}
		if !rm.health.health(c.PhyID).Usable() {
			d.Health = pluginapi.Unhealthy
		}
		out = append(out, d)
	}
	return out
}

// Allocate returns the container settings. With a chip picker (Volcano
// mode) the picker chooses the chips; otherwise they are the kubelet's IDs.
func (rm *resourceManager) Allocate(ctx context.Context, ids []string) (*pluginapi.ContainerAllocateResponse, error) {
	var chips []Chip
	var err error
	resolve := func(ids []string) ([]Chip, error) { return resolveIDs(rm.resource, rm.byID, rm.health, ids) }
	if rm.opts.Picker != nil {
		chips, err = rm.opts.Picker.PickChips(ctx, rm.resource, ids, resolve)
	} else {
		chips, err = resolve(ids)
	}
	if err != nil {
		return nil, err
	}
	return containerResponse(chips, rm.opts.UseAscendDocker, rm.opts.DevRoot), nil
}

// GetPreferredAllocation keeps mustInclude and fills up with the lowest
// physical IDs; Ascend chips of a server are all-to-all connected. It
// refuses (InvalidArgument) a size outside 1..len(available), unknown or
// duplicate IDs, and must-include IDs that are not available.
func (rm *resourceManager) GetPreferredAllocation(_ context.Context, available, mustInclude []string, size int) ([]string, error) {
	if size < 1 || size > len(available) {
		return nil, status.Errorf(codes.InvalidArgument, "allocation size %d for %s must be between 1 and the %d available devices", size, rm.resource, len(available))
	}
	if len(mustInclude) > size {
		return nil, status.Errorf(codes.InvalidArgument, "%d must-include devices exceed allocation size %d for %s", len(mustInclude), size, rm.resource)
	}
	avail := make(map[string]bool, len(available))
	for _, id := range available {
		if _, ok := rm.byID[id]; !ok {
			return nil, status.Errorf(codes.InvalidArgument, "unknown device ID %q for resource %s", id, rm.resource)
		}
		if avail[id] {
			return nil, status.Errorf(codes.InvalidArgument, "device ID %q is available twice", id)
		}
		avail[id] = true
	}
	for i, id := range mustInclude {
		if !avail[id] {
			return nil, status.Errorf(codes.InvalidArgument, "must-include device %q is not among the available devices of %s", id, rm.resource)
		}
		if slices.Contains(mustInclude[:i], id) {
			return nil, status.Errorf(codes.InvalidArgument, "must-include device %q is listed twice", id)
		}
	}
	out := slices.Clone(mustInclude)
	rest := slices.DeleteFunc(slices.Clone(available), func(id string) bool { return slices.Contains(mustInclude, id) })
	slices.SortFunc(rest, func(a, b string) int { return rm.byID[a].PhyID - rm.byID[b].PhyID })
	for _, id := range rest {
		if len(out) >= size {
			break
		}
		out = append(out, id)
	}
	return out, nil
}
