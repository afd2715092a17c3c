package nodeagent

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
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

func gpuSpec(name, help string, f Field, kind prometheus.ValueType, scale float64) seriesSpec {
	return seriesSpec{desc: prometheus.NewDesc(name, help, gpuLabels, nil), field: f, kind: kind, scale: scale}
}

func npuSpec(name, help string, f Field, scale float64) seriesSpec {
	return seriesSpec{desc: prometheus.NewDesc(name, help, npuLabels, nil), field: f, kind: prometheus.GaugeValue, scale: scale}
}

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

var (
	npuHealthDesc = prometheus.NewDesc("npu_chip_info_health_status", "NPU health: 1 healthy, 0 unhealthy.", npuLabels, nil)
	npuCountDesc  = prometheus.NewDesc("machine_npu_nums", "Number of NPUs on the node.", nil, nil)
)

// exporter renders the latest snapshot; it never touches the hardware.
// The series of a snapshot are built once, at the first scrape after it,
// and shared by later scrapes.
type exporter struct {
	snap     *atomic.Pointer[Snapshot]
	rendered *atomic.Pointer[rendered]
}

// rendered are the series of one snapshot.
type rendered struct {
	snap    *Snapshot
	metrics []prometheus.Metric
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

// Collect renders the last snapshot: one series per device, or per
// container holding it, so that a GPU shared by several pods has one
// series for each.
func (e exporter) Collect(ch chan<- prometheus.Metric) {
	s := e.snap.Load()
	if s == nil {
		return
	}
	r := e.rendered.Load()
	if r == nil || r.snap != s {
		r = &rendered{snap: s, metrics: render(s)}
		e.rendered.Store(r)
	}
	for _, m := range r.metrics {
		ch <- m
	}
}

// render builds a snapshot's series.
func render(s *Snapshot) []prometheus.Metric {
	ch := make(chan prometheus.Metric, 256)
	var out []prometheus.Metric
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range ch {
			out = append(out, m)
		}
	}()
	renderTo(ch, s)
	close(ch)
	<-done
	return out
}

func renderTo(ch chan<- prometheus.Metric, s *Snapshot) {
	npus := 0
	for i := range s.Devices {
		d := &s.Devices[i]
		owners := s.OwnersOf(d)
		if len(owners) == 0 {
			owners = []Owner{{}}
		}
		switch d.Vendor {
		case VendorNVIDIA:
			for _, o := range owners {
				collectGPU(ch, s.Hostname, d, o)
			}
		case VendorAscend:
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

func collectNPU(ch chan<- prometheus.Metric, d *Device, o Owner) {
	labels := []string{d.Index, d.Model, d.PCIBusID, o.Namespace, o.Pod, o.Container}
	for _, spec := range npuSeries {
		if v, ok := d.Get(spec.field); ok {
			ch <- prometheus.MustNewConstMetric(spec.desc, spec.kind, v*spec.scale, labels...)
		}
	}
	ch <- prometheus.MustNewConstMetric(npuHealthDesc, prometheus.GaugeValue, boolValue(d.Healthy), labels...)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
