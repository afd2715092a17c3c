package plugin

import (
	"context"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/accelstack/accelstack/pkg/ascend"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
)

// resource is one Ascend extended resource (one chip kind) served through
// pkg/deviceplugin.
type resource struct {
	name    string
	chips   []ascend.Chip
	byID    map[string]ascend.Chip
	health  *healthMonitor
	opts    Options
	changes chan struct{}
}

var _ deviceplugin.Resource = (*resource)(nil)

func newResource(name string, chips []ascend.Chip, h *healthMonitor, o Options) *resource {
	r := &resource{name: name, chips: chips, byID: map[string]ascend.Chip{}, health: h, opts: o,
		changes: make(chan struct{}, 1)}
	for _, c := range chips {
		r.byID[c.ID()] = c
	}
	h.subscribe(func() {
		select {
		case r.changes <- struct{}{}:
		default:
		}
	})
	return r
}

// Name returns the resource name, e.g. huawei.com/Ascend910.
func (r *resource) Name() string { return r.name }

// Changes signals health changes.
func (r *resource) Changes() <-chan struct{} { return r.changes }

// Devices returns every chip with its health; unhealthy and
// network-unhealthy chips are Unhealthy.
func (r *resource) Devices() []*pluginapi.Device {
	out := make([]*pluginapi.Device, 0, len(r.chips))
	for _, c := range r.chips {
		d := &pluginapi.Device{ID: c.ID(), Health: pluginapi.Healthy}
		if !r.health.health(c.PhyID).Usable() {
			d.Health = pluginapi.Unhealthy
		}
		out = append(out, d)
	}
	return out
}

// Allocate returns the container settings. With a chip picker (Volcano
// mode) the picker chooses the chips; otherwise they are the kubelet's IDs.
func (r *resource) Allocate(ctx context.Context, ids []string) (*pluginapi.ContainerAllocateResponse, error) {
	var chips []ascend.Chip
	var err error
	resolve := func(ids []string) ([]ascend.Chip, error) { return resolveIDs(r.name, r.byID, r.health, ids) }
	if r.opts.Picker != nil {
		chips, err = r.opts.Picker.PickChips(ctx, r.name, ids, resolve)
	} else {
		chips, err = resolve(ids)
	}
	if err != nil {
		return nil, err
	}
	return containerResponse(chips, r.opts.UseAscendDocker, r.opts.DevRoot), nil
}

// GetPreferredAllocation keeps mustInclude and fills up with the lowest
// physical IDs; Ascend chips of a server are all-to-all connected. It
// refuses (InvalidArgument) a size outside 1..len(available), unknown or
// duplicate IDs, and must-include IDs that are not available.
func (r *resource) GetPreferredAllocation(_ context.Context, available, mustInclude []string, size int) ([]string, error) {
	if size < 1 || size > len(available) {
		return nil, status.Errorf(codes.InvalidArgument, "allocation size %d for %s must be between 1 and the %d available devices", size, r.name, len(available))
	}
	if len(mustInclude) > size {
		return nil, status.Errorf(codes.InvalidArgument, "%d must-include devices exceed allocation size %d for %s", len(mustInclude), size, r.name)
	}
	avail := make(map[string]bool, len(available))
	for _, id := range available {
		if _, ok := r.byID[id]; !ok {
			return nil, status.Errorf(codes.InvalidArgument, "unknown device ID %q for resource %s", id, r.name)
		}
		if avail[id] {
			return nil, status.Errorf(codes.InvalidArgument, "device ID %q is available twice", id)
		}
		avail[id] = true
	}
	for i, id := range mustInclude {
		if !avail[id] {
			return nil, status.Errorf(codes.InvalidArgument, "must-include device %q is not among the available devices of %s", id, r.name)
		}
		if slices.Contains(mustInclude[:i], id) {
			return nil, status.Errorf(codes.InvalidArgument, "must-include device %q is listed twice", id)
		}
	}
	out := slices.Clone(mustInclude)
	rest := slices.DeleteFunc(slices.Clone(available), func(id string) bool { return slices.Contains(mustInclude, id) })
	slices.SortFunc(rest, func(a, b string) int { return r.byID[a].PhyID - r.byID[b].PhyID })
	for _, id := range rest {
		if len(out) >= size {
			break
		}
		out = append(out, id)
	}
	return out, nil
}
