package nodeagent

import (
	"strconv"
	"strings"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/mig"
	"github.com/accelstack/accelstack/pkg/nvidia"
)

// GPU Feature Discovery label keys the agent writes.
const (
	LabelGPUProduct         = "nvidia.com/gpu.product"
	LabelGPUCount           = "nvidia.com/gpu.count"
	LabelGPUReplicas        = "nvidia.com/gpu.replicas"
	LabelGPUMemory          = "nvidia.com/gpu.memory"
	LabelGPUFamily          = "nvidia.com/gpu.family"
	LabelGPUComputeMajor    = "nvidia.com/gpu.compute.major"
	LabelGPUComputeMinor    = "nvidia.com/gpu.compute.minor"
	LabelDriverMajor        = "nvidia.com/cuda.driver-version.major"
	LabelDriverMinor        = "nvidia.com/cuda.driver-version.minor"
	LabelDriverRevision     = "nvidia.com/cuda.driver-version.revision"
	LabelMIGCapable         = "nvidia.com/mig.capable"
	LabelMIGStrategy        = "nvidia.com/mig.strategy"
	LabelGPUSharingStrategy = "nvidia.com/gpu.sharing-strategy"
)

// Sharing strategies, as values of LabelGPUSharingStrategy.
const (
	SharingNone        = "none"
	SharingTimeSlicing = "time-slicing"
)

// GFDLabels returns GPU Feature Discovery's labels for a machine under the
// device plugin's settings (MIG strategy and time-slicing from the same
// config file). migCapable is whether any GPU supports MIG. Under the
// single strategy the product gains -MIG-<profile> and count and memory
// describe the MIG devices; under mixed, each MIG resource gets
// nvidia.com/mig-<profile>.{count,memory,replicas,product}; a resource
// with more than one time-slicing replica gets -SHARED on its product.
// A node the single strategy refuses (non-uniform MIG) is labelled as
// under none, and the returned error says why.
func GFDLabels(m *nvidia.Machine, migCapable bool, s nvidia.Settings) (map[string]string, error) {
	out := map[string]string{}
	if m == nil || len(m.GPUs) == 0 {
		return out, nil
	}
	first := &m.GPUs[0]
	strategy := s.MigStrategy
	if strategy == "" {
		strategy = mig.StrategyNone
	}
	assign, err := mig.Assign(strategy, m.MIGGPUs())
	if err != nil {
		strategy = mig.StrategyNone
		assign, _ = mig.Assign(strategy, m.MIGGPUs())
	}
	replicas := replicasByResource(s)
	shared := false
	product := labelValue(first.Name)

	gpuProduct, gpuCount, gpuMemory := product, len(m.GPUs), first.MemoryBytes/mib
	if strategy == mig.StrategySingle && first.MIGEnabled && len(first.MIGDevices) > 0 {
		d := first.MIGDevices[0]
		gpuProduct = product + "-MIG-" + d.MIG.Profile.String()
		gpuCount = len(assign[accelerator.NVIDIAGPU])
		gpuMemory = d.MemoryBytes / mib
	}
	r := replicas[accelerator.NVIDIAGPU]
	if r > 1 {
		gpuProduct += "-SHARED"
		shared = true
	}
	out[LabelGPUProduct] = labelValue(gpuProduct)
	out[LabelGPUCount] = strconv.Itoa(gpuCount)
	out[LabelGPUReplicas] = strconv.Itoa(max(r, 1))
	out[LabelGPUMemory] = strconv.FormatUint(gpuMemory, 10)

	if strategy == mig.StrategyMixed {
		for _, g := range m.GPUs {
			for _, d := range g.MIGDevices {
				res := d.MIG.Profile.ResourceName()
				prefix := res
				n, _ := strconv.Atoi(out[prefix+".count"])
				out[prefix+".count"] = strconv.Itoa(n + 1)
				out[prefix+".memory"] = strconv.FormatUint(d.MemoryBytes/mib, 10)
				p := product + "-MIG-" + d.MIG.Profile.String()
				rr := replicas[res]
				if rr > 1 {
					p += "-SHARED"
					shared = true
				}
				out[prefix+".replicas"] = strconv.Itoa(max(rr, 1))
				out[prefix+".product"] = labelValue(p)
			}
		}
	}

	if major, minor, ok := strings.Cut(first.ComputeCapability, "."); ok {
		out[LabelGPUComputeMajor], out[LabelGPUComputeMinor] = major, minor
		out[LabelGPUFamily] = family(major, minor)
	}
	if parts := strings.Split(m.DriverVersion, "."); m.DriverVersion != "" {
		keys := []string{LabelDriverMajor, LabelDriverMinor, LabelDriverRevision}
		for i := 0; i < len(parts) && i < len(keys); i++ {
			out[keys[i]] = parts[i]
		}
	}
	out[LabelMIGCapable] = strconv.FormatBool(migCapable)
	if migCapable {
		out[LabelMIGStrategy] = s.MigStrategy
		if out[LabelMIGStrategy] == "" {
			out[LabelMIGStrategy] = mig.StrategyNone
		}
	}
	out[LabelGPUSharingStrategy] = SharingNone
	if shared {
		out[LabelGPUSharingStrategy] = SharingTimeSlicing
	}
	return out, err
}

// replicasByResource reads time-slicing replicas per resource name.
func replicasByResource(s nvidia.Settings) map[string]int {
	out := map[string]int{}
	if s.TimeSlicing == nil {
		return out
	}
	for _, r := range s.TimeSlicing.Resources {
		out[r.Name] = r.Replicas
	}
	return out
}

// family maps a compute capability to GFD's architecture family.
func family(major, minor string) string {
	switch major {
	case "1":
		return "tesla"
	case "2":
		return "fermi"
	case "3":
		return "kepler"
	case "5":
		return "maxwell"
	case "6":
		return "pascal"
	case "7":
		if minor >= "5" {
			return "turing"
		}
		return "volta"
	case "8":
		if minor == "9" {
			return "ada-lovelace"
		}
		return "ampere"
	case "9":
		return "hopper"
	case "10", "12":
		return "blackwell"
	}
	return "undefined"
}

// labelValue makes a product name a label value: spaces and other
// characters labels refuse become "-", at most 63 characters, starting
// and ending alphanumerically.
func labelValue(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '-'
		}
	}
	if len(b) > 63 {
		b = b[:63]
	}
	return strings.Trim(string(b), "-_.")
}
