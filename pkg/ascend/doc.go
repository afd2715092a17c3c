// Package ascend is the Huawei Ascend device model that the device plugin
// and the node agent share: Lib is the part of the DCMI library they use,
// bound with cgo (OpenDCMI) or simulated (pkg/ascend/simulator); Open
// initialises it, Discover lists the chips, ReadHealth reads a chip's
// health. The device-plugin side (resources, Allocate) is
// pkg/ascend/plugin; this package imports neither it nor the kubelet
// device-plugin API, so the node agent links neither.
package ascend
