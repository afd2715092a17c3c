// Package plugin is the Ascend side of the device plugin: Vendor and its
// Resources (one per chip kind) implement pkg/deviceplugin's interfaces
// over the device model of pkg/ascend. It polls chip health, answers
// Allocate for Ascend Docker Runtime or with device specs, and, with a
// ChipPicker (Volcano mode, pkg/ascend/volcano), gives the chips the
// scheduler chose. Registration brings it, with Volcano mode and the node
// state (pkg/ascend/nodestate), into cmd/device-plugin. It is separate from
// pkg/ascend so that the node agent, which reads the same chips, links
// neither pkg/deviceplugin nor the kubelet device-plugin API.
package plugin
