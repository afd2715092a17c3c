package plugin

import (
	"fmt"
	"sort"
	"strconv"

	"k8s.io/klog/v2"

	configv1 "github.com/accelstack/accelstack/api/config/v1"
	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/mig"
	"github.com/accelstack/accelstack/pkg/nvidia"
)

// replicaSep separates a device ID from its replica number: <uuid>::<n>.
const replicaSep = "::"

// advertised is one ID the kubelet sees: a device or one of its replicas.
type advertised struct {
	id      string
	dev     *nvidia.Device
	replica int // -1 when not replicated
}

// resourceSpec is the set of devices advertised under one resource name.
type resourceSpec struct {
	name        string
	devices     []advertised
	replicated  bool
	failOverOne bool
}

// buildResources applies the MIG strategy, then time-slicing.
func buildResources(m *nvidia.Machine, s nvidia.Settings, logger klog.Logger) ([]*resourceSpec, error) {
	assign, err := mig.Assign(s.MigStrategy, m.MIGGPUs())
	if err != nil {
		return nil, err
	}
	all := m.Devices()
	base := map[string][]*nvidia.Device{}
	for name, ids := range assign {
		for _, id := range ids {
			base[name] = append(base[name], all[id])
		}
	}
	out := map[string]*resourceSpec{}
	add := func(name string, a advertised, replicated, failOverOne bool) {
		r := out[name]
		if r == nil {
			r = &resourceSpec{name: name}
			out[name] = r
		}
		r.devices = append(r.devices, a)
		r.replicated = r.replicated || replicated
		r.failOverOne = r.failOverOne || failOverOne
	}
	ts := s.TimeSlicing
	if ts == nil {
		ts = &configv1.TimeSlicing{}
	}
	rules := map[string]configv1.ReplicatedResource{}
	for i, r := range ts.Resources {
		if _, ok := base[r.Name]; !ok {
			logger.Info("Time-slicing names a resource this node does not have; ignoring it", "resource", r.Name, "field", fmt.Sprintf("sharing.timeSlicing.resources[%d].name", i))
			continue
		}
		if err := checkSelection(r, base[r.Name], i); err != nil {
			return nil, err
		}
		rules[r.Name] = r
	}
	// A rename (or the .shared name) that is another resource of this
	// node, or the target of two resources, would merge device lists.
	targets := map[string]string{}
	for name, rule := range rules {
		target := replicaResource(name, rule, ts)
		if target == name {
			continue
		}
		if _, clash := base[target]; clash {
			return nil, fmt.Errorf("%w: sharing.timeSlicing: replicas of %s would be advertised as %s, a resource of this node", configv1.ErrInvalid, name, target)
		}
		if other, dup := targets[target]; dup {
			return nil, fmt.Errorf("%w: sharing.timeSlicing: replicas of %s and %s would both be advertised as %s", configv1.ErrInvalid, other, name, target)
		}
		targets[target] = name
	}
	for name, devs := range base {
		rule, ok := rules[name]
		for _, d := range devs {
			if !ok || !selected(rule.Devices, d) {
				add(name, advertised{id: d.UUID, dev: d, replica: -1}, false, false)
				continue
			}
			target := replicaResource(name, rule, ts)
			for n := 0; n < rule.Replicas; n++ {
				add(target, advertised{id: d.UUID + replicaSep + strconv.Itoa(n), dev: d, replica: n}, true, ts.FailRequestsGreaterThanOne)
			}
		}
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	specs := make([]*resourceSpec, 0, len(names))
	for _, n := range names {
		if len(n) > 63+len(accelerator.NVIDIADomain) {
			return nil, fmt.Errorf("resource name %q is too long", n)
		}
		if len(out[n].devices) > configv1.MaxAdvertised {
			return nil, fmt.Errorf("%w: sharing.timeSlicing: %s would advertise %d device IDs, more than %d", configv1.ErrInvalid, n, len(out[n].devices), configv1.MaxAdvertised)
		}
		specs = append(specs, out[n])
	}
	return specs, nil
}

// checkSelection refuses device selectors that match no device.
func checkSelection(r configv1.ReplicatedResource, devs []*nvidia.Device, i int) error {
	if r.Devices.All {
		return nil
	}
	for _, want := range r.Devices.List {
		found := false
		for _, d := range devs {
			found = found || d.UUID == want || d.Index == want
		}
		if !found {
			return fmt.Errorf("%w: sharing.timeSlicing.resources[%d].devices: no %s device %q on this node",
				configv1.ErrInvalid, i, r.Name, want)
		}
	}
	return nil
}

func selected(sel configv1.ReplicatedDevices, d *nvidia.Device) bool {
	if sel.All || len(sel.List) == 0 {
		return true
	}
	for _, s := range sel.List {
		if s == d.UUID || s == d.Index {
			return true
		}
	}
	return false
}

// replicaResource is the resource name the replicas of name are advertised
// under: the rule's rename, <name>.shared when renameByDefault is set, or
// name itself.
func replicaResource(name string, rule configv1.ReplicatedResource, ts *configv1.TimeSlicing) string {
	switch {
	case rule.Rename != "":
		return rule.Rename
	case ts.RenameByDefault:
		return name + ".shared"
	}
	return name
}
