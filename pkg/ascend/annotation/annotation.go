// Package annotation is the ascend-910-configuration pod annotation: one
// pod's entry of an HCCL rank table, which the device plugin writes in
// Volcano mode (pkg/ascend/volcano) and the rank-table controller
// (pkg/ranktable) reads. It is a leaf without cgo so that the controller
// shares the wire type without linking the DCMI binding.
package annotation

// ConfigurationKey is the pod annotation holding a PodConfiguration as
// JSON.
const ConfigurationKey = "ascend.kubectl.kubernetes.io/ascend-910-configuration"

// PodConfiguration is the ConfigurationKey annotation: the pod's server
// and the chips it was given.
type PodConfiguration struct {
	PodName  string         `json:"pod_name"`
	ServerID string         `json:"server_id"`
	Devices  []DeviceConfig `json:"devices"`
}

// DeviceConfig is one chip of a PodConfiguration: its physical ID and
// RoCE address.
type DeviceConfig struct {
	DeviceID string `json:"device_id"`
	DeviceIP string `json:"device_ip"`
}
