// Package nodeagent is the node agent: it serves accelerator metrics for
// Prometheus and keeps the node's accelerator labels current.
//
// Device sources (the NVIDIA source over pkg/nvidia, and any other Source,
// such as the Ascend one to come) are read by a Collector on an interval
// into a Snapshot, together with the kubelet PodResources assignments that
// attribute devices to containers. Scrapes of /metrics render the last
// Snapshot only and never wait on the hardware. GPU series carry
// dcgm-exporter's names and labels and NPU series npu-exporter's, so
// existing dashboards and alert rules work unchanged. The labels the
// sources compute (GPU Feature Discovery's names for NVIDIA) are applied
// to the Node with server-side apply under the agent's own field manager.
package nodeagent
