package nodeagent

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

// gpuLabels are dcgm-exporter's labels, then the MIG and pod labels.
var gpuLabels = []string{"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "GPU_I_PROFILE", "GPU_I_ID", "pod", "namespace", "container"}

// npuLabels are npu-exporter's labels for chip series.
var npuLabels = []string{"id", "modelName", "pcie_bus_info", "namespace", "pod_name", "container_name"}

// seriesSpec is one exported metric family and the reading behind it.
type seriesSpec struct {
	desc  *prometheus.Desc
	field Field
	kind  prometheus.ValueType
	scale float64 // multiplier from the Field's unit
}

// gpuSpec is a GPU family with dcgm-exporter's labels.
func gpuSpec(name, help string, f Field, kind prometheus.ValueType, scale float64) seriesSpec {
	return seriesSpec{desc: prometheus.NewDesc(name, help, gpuLabels, nil), field: f, kind: kind, scale: scale}
}

// npuSpec is an NPU gauge family with npu-exporter's labels.
func npuSpec(name, help string, f Field, scale float64) seriesSpec {
	return seriesSpec{desc: prometheus.NewDesc(name, help, npuLabels, nil), field: f, kind: prometheus.GaugeValue, scale: scale}
}

// mib is the bytes in a MiB, the unit of the memory families.
const mib = 1 << 20

// gpuSeries are the dcgm-exporter families, with its names, units and types.
var gpuSeries = []seriesSpec{
	gpuSpec("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", FieldUtilization, prometheus.GaugeValue, 1),
	gpuSpec("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", FieldMemoryCopyUtilization, prometheus.GaugeValue, 1),
	gpuSpec("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", FieldMemoryUsedBytes, prometheus.GaugeValue, 1.0/mib),
	gpuSpec("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", FieldMemoryFreeBytes, prometheus.GaugeValue, 1.0/mib),
	gpuSpec("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", FieldTemperatureCelsius, prometheus.GaugeValue, 1),
	gpuSpec("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", FieldPowerWatts, prometheus.GaugeValue, 1),
	gpuSpec("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).", FieldEnergyMillijoules, prometheus.CounterValue, 1),
	gpuSpec("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", FieldSMClockMHz, prometheus.GaugeValue, 1),
	gpuSpec("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", FieldMemoryClockMHz, prometheus.GaugeValue, 1),
	gpuSpec("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", FieldXID, prometheus.GaugeValue, 1),
	gpuSpec("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries.", FieldPCIeReplays, prometheus.CounterValue, 1),
}

// gpuHealthDesc is the GPU and MIG device health family.
var gpuHealthDesc = prometheus.NewDesc("accelstack_gpu_healthy",
	"1 when the GPU or MIG device is healthy (NVML answers and no critical XID in the quiet period), else 0.", gpuLabels, nil)

// npuSeries are the npu-exporter chip families.
var npuSeries = []seriesSpec{
	npuSpec("npu_chip_info_utilization", "NPU AI core utilization (in %).", FieldUtilization, 1),
	npuSpec("npu_chip_info_temperature", "NPU temperature (in C).", FieldTemperatureCelsius, 1),
	npuSpec("npu_chip_info_power", "NPU power draw (in W).", FieldPowerWatts, 1),
	npuSpec("npu_chip_info_used_memory", "NPU DDR memory used (in MB).", FieldMemoryUsedBytes, 1.0/mib),
	npuSpec("npu_chip_info_total_memory", "NPU DDR memory total (in MB).", FieldMemoryTotalBytes, 1.0/mib),
	npuSpec("npu_chip_info_hbm_used_memory", "NPU HBM memory used (in MB).", FieldHBMUsedBytes, 1.0/mib),
}

// The NPU health and count families.
var (
	npuHealthDesc = prometheus.NewDesc("npu_chip_info_health_status", "NPU health: 1 healthy, 0 unhealthy.", npuLabels, nil)
	npuCountDesc  = prometheus.NewDesc("machine_npu_nums", "Number of NPUs on the node.", nil, nil)
)

// exporter renders a snapshot's device series; it never touches the
// hardware. The agent gathers it once per snapshot (see metricsHandler).
type exporter struct {
	snap func() *Snapshot
}

var _ prometheus.Collector = exporter{}

// Describe sends every family's descriptor.
func (e exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range gpuSeries {
		ch <- s.desc
	}
	for _, s := range npuSeries {
		ch <- s.desc
	}
	ch <- gpuHealthDesc
	ch <- npuHealthDesc
	ch <- npuCountDesc
}

// Collect renders the snapshot: one series per device, or per container
// holding it, so that a GPU shared by several pods has one series for each.
func (e exporter) Collect(ch chan<- prometheus.Metric) {
	s := e.snap()
	if s == nil {
		return
	}
	npus := 0
	for i := range s.Devices {
		d := &s.Devices[i]
		owners := s.OwnersOf(d)
		if len(owners) == 0 {
			owners = []Owner{{}}
		}
		switch d.Vendor {
		case accelerator.VendorNVIDIA:
			for _, o := range owners {
				collectGPU(ch, s.Hostname, d, o)
			}
		case accelerator.VendorAscend:
			npus++
			for _, o := range owners {
				collectNPU(ch, d, o)
			}
		}
	}
	if npus > 0 {
		ch <- prometheus.MustNewConstMetric(npuCountDesc, prometheus.GaugeValue, float64(npus))
	}
}

// collectGPU sends a GPU or MIG device's series for one owner.
func collectGPU(ch chan<- prometheus.Metric, hostname string, d *Device, o Owner) {
	uuid, profile, giID := d.ID, "", ""
	if d.MIG != nil {
		uuid, profile, giID = d.MIG.ParentID, d.MIG.Profile, strconv.Itoa(d.MIG.GPUInstance)
	}
	labels := []string{d.Index, uuid, d.PCIBusID, "nvidia" + strconv.Itoa(d.Minor), d.Model, hostname, profile, giID, o.Pod, o.Namespace, o.Container}
	for _, spec := range gpuSeries {
		if v, ok := d.Get(spec.field); ok {
			ch <- prometheus.MustNewConstMetric(spec.desc, spec.kind, v*spec.scale, labels...)
		}
	}
	ch <- prometheus.MustNewConstMetric(gpuHealthDesc, prometheus.GaugeValue, boolValue(d.Healthy), labels...)
}

// collectNPU sends an NPU's series for one owner.
func collectNPU(ch chan<- prometheus.Metric, d *Device, o Owner) {
	labels := []string{d.Index, d.Model, d.PCIBusID, o.Namespace, o.Pod, o.Container}
	for _, spec := range npuSeries {
		if v, ok := d.Get(spec.field); ok {
			ch <- prometheus.MustNewConstMetric(spec.desc, spec.kind, v*spec.scale, labels...)
		}
	}
	ch <- prometheus.MustNewConstMetric(npuHealthDesc, prometheus.GaugeValue, boolValue(d.Healthy), labels...)
}

// boolValue is 1 for true, 0 for false.
func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
