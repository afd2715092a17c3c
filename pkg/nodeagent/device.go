package nodeagent

import "time"

// Field is one kind of device reading.
type Field int

// The readings a source may report. A source leaves unset what its library
// cannot give; unset readings produce no series.
const (
	// FieldUtilization is the compute utilization in percent.
	FieldUtilization Field = iota
	// FieldMemoryCopyUtilization is the memory bandwidth utilization in percent.
	FieldMemoryCopyUtilization
	// FieldMemoryUsedBytes is the device memory in use.
	FieldMemoryUsedBytes
	// FieldMemoryFreeBytes is the free device memory.
	FieldMemoryFreeBytes
	// FieldMemoryTotalBytes is the device memory size.
	FieldMemoryTotalBytes
	// FieldHBMUsedBytes is the high-bandwidth memory in use (NPUs).
	FieldHBMUsedBytes
	// FieldTemperatureCelsius is the device temperature.
	FieldTemperatureCelsius
	// FieldPowerWatts is the power draw.
	FieldPowerWatts
	// FieldEnergyMillijoules is the energy consumed since the driver loaded.
	FieldEnergyMillijoules
	// FieldSMClockMHz is the SM (compute) clock.
	FieldSMClockMHz
	// FieldMemoryClockMHz is the memory clock.
	FieldMemoryClockMHz
	// FieldXID is the last XID error seen, 0 when none.
	FieldXID
	// FieldPCIeReplays is the PCIe replay counter.
	FieldPCIeReplays

	numFields
)

// MIGInstance places a MIG device on its parent GPU.
type MIGInstance struct {
	// Profile is the MIG profile, e.g. 1g.5gb.
	Profile string
	// GPUInstance is the NVML GPU instance ID.
	GPUInstance int
	// ParentID is the parent GPU's UUID.
	ParentID string
}

// Device is one device's state in a snapshot: identity, health and readings.
type Device struct {
	// Vendor is the device's vendor, e.g. accelerator.VendorNVIDIA.
	Vendor string
	// ID is the ID the device plugin advertises for it: the UUID of an
	// NVIDIA GPU or MIG device, e.g. Ascend910-0 for an NPU.
	ID string
	// Aliases are other IDs the kubelet may report for the device, such as
	// NVML indices ("0", "0:1") under the index device ID strategy.
	Aliases []string
	// Index is the (parent) device's index on the node.
	Index string
	// Minor is the (parent) device's /dev minor number.
	Minor int
	// Model is the product name.
	Model string
	// PCIBusID is the (parent) device's PCI bus id.
	PCIBusID string
	// MIG is set for MIG devices.
	MIG *MIGInstance
	// Healthy is the device's health.
	Healthy bool

	values [numFields]float64
	has    uint32
}

// Set records a reading.
func (d *Device) Set(f Field, v float64) {
	d.values[f] = v
	d.has |= 1 << f
}

// unset forgets readings.
func (d *Device) unset(fs ...Field) {
	for _, f := range fs {
		d.has &^= 1 << f
	}
}

// Get returns a reading and whether it was set.
func (d *Device) Get(f Field) (float64, bool) {
	return d.values[f], d.has&(1<<f) != 0
}

// SourceSnapshot is what one source reports in one collection.
type SourceSnapshot struct {
	// Devices are the source's devices.
	Devices []Device
	// NodeLabels are the node labels the source wants; the agent owns
	// these keys and removes keys a source stops reporting.
	NodeLabels map[string]string
}

// Owner is a container that holds a device.
type Owner struct {
	Namespace, Pod, Container string
}

// Snapshot is the state of the node at one collection, what scrapes render.
type Snapshot struct {
	// Time is when the collection ended.
	Time time.Time
	// Hostname is the value of the Hostname label.
	Hostname string
	// Devices are every source's devices.
	Devices []Device
	// Owners maps a device ID (without replica suffix) to the containers
	// holding it; nil when pod attribution is unavailable.
	Owners map[string][]Owner
	// NodeLabels are the union of the sources' node labels.
	NodeLabels map[string]string
}

// OwnersOf returns the containers holding d, matching its ID or aliases.
func (s *Snapshot) OwnersOf(d *Device) []Owner {
	if s.Owners == nil {
		return nil
	}
	if o := s.Owners[d.ID]; len(o) > 0 || len(d.Aliases) == 0 {
		return o
	}
	var out []Owner
	for _, a := range d.Aliases {
		out = append(out, s.Owners[a]...)
	}
	return out
}
