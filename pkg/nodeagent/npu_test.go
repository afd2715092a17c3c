package nodeagent

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/test/podresources"
)

// npuSource is a small in-test Ascend source, standing in for pkg/ascend.
type npuSource struct{ devices []Device }

func (s npuSource) Name() string { return accelerator.VendorAscend }
func (s npuSource) Collect(context.Context) (SourceSnapshot, error) {
	return SourceSnapshot{Devices: s.devices, NodeLabels: AscendLabels("Ascend910B", 20, len(s.devices))}, nil
}
func (s npuSource) Close() error { return nil }

func npu(i string, healthy bool, util float64) Device {
	d := Device{Vendor: accelerator.VendorAscend, ID: "Ascend910-" + i, Index: i, Model: "Ascend910B", PCIBusID: "0000:c1:00." + i, Healthy: healthy}
	d.Set(FieldUtilization, util)
	d.Set(FieldTemperatureCelsius, 50)
	d.Set(FieldPowerWatts, 180.5)
	d.Set(FieldMemoryUsedBytes, 2048*mib)
	d.Set(FieldMemoryTotalBytes, 16384*mib)
	d.Set(FieldHBMUsedBytes, 30000*mib)
	return d
}

func TestNPUExposition(t *testing.T) {
	srv := podresources.Start(t)
	srv.SetPods(podresources.Pod("ai", "train", podresources.Container("worker", podresources.Devices("huawei.com/Ascend910", "Ascend910-1"))))
	src := npuSource{devices: []Device{npu("0", true, 10), npu("1", false, 95)}}
	c := NewCollector("node-1", []Source{src}, &PodResourcesClient{Socket: srv.Path()}, nil)
	snap := c.CollectOnce(context.Background())
	all := gather(t, c)

	type row struct {
		Name   string
		Labels map[string]string
		Value  float64
	}
	var got []row
	for _, s := range all {
		if s.name == "machine_npu_nums" || len(s.name) > 13 && s.name[:13] == "npu_chip_info" {
			if s.labels["id"] == "1" || s.name == "machine_npu_nums" {
				got = append(got, row{s.name, s.labels, s.value})
			}
		}
	}
	l := map[string]string{"id": "1", "modelName": "Ascend910B", "pcie_bus_info": "0000:c1:00.1", "namespace": "ai", "pod_name": "train", "container_name": "worker"}
	want := []row{
		{"machine_npu_nums", map[string]string{}, 2},
		{"npu_chip_info_hbm_used_memory", l, 30000},
		{"npu_chip_info_health_status", l, 0},
		{"npu_chip_info_power", l, 180.5},
		{"npu_chip_info_temperature", l, 50},
		{"npu_chip_info_total_memory", l, 16384},
		{"npu_chip_info_used_memory", l, 2048},
		{"npu_chip_info_utilization", l, 95},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NPU series of chip 1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{LabelAscendServerType: "Ascend910B-20", LabelAscendNPUCount: "2"}, snap.NodeLabels); diff != "" {
		t.Errorf("node labels (-want +got):\n%s", diff)
	}
	if n := len(find(all, "DCGM_FI_DEV_GPU_TEMP", nil)); n != 0 {
		t.Errorf("%d GPU series on an NPU node", n)
	}
}
