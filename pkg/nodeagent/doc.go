// Package nodeagent is the node agent: it serves accelerator metrics for
// Prometheus and keeps the node's accelerator labels current.
//
// Device sources are read by a Collector on an interval into a Snapshot,
// together with the kubelet PodResources assignments that attribute devices
// to containers: the NVIDIA source reads GPUs and MIG devices through the
// device model of pkg/nvidia (NVML or pkg/nvidia/simulator), the Ascend
// source reads NPUs through pkg/ascend (DCMI or pkg/ascend/simulator).
// Both apply the device plugin's rules (config file, XID health policy,
// chip health codes) without linking the device plugin itself. Scrapes of
// /metrics serve the last Snapshot only and never wait on the hardware:
// its device families are encoded in the text format and compressed once,
// after the collection, and a scrape adds the small live families.
// GPU series carry dcgm-exporter's names and labels and NPU series
// npu-exporter's, so existing dashboards and alert rules work unchanged.
// The labels the sources compute (GPU Feature Discovery's names for
// NVIDIA, servertype and the NPU count for Ascend) are applied to the Node
// with server-side apply under the agent's own field manager, through
// pkg/nodeclient/nodelabel.
package nodeagent
