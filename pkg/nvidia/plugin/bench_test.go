package plugin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/pkg/nvidia/plugin"
	"github.com/accelstack/accelstack/test/kubelet"
	"github.com/accelstack/accelstack/test/plugintest"
)

// benchPlugin runs an in-process plugin and returns its kubelet-side view.
func benchPlugin(b *testing.B, config, resource string) *kubelet.Plugin {
	o := plugin.DefaultOptions()
	o.Backend, o.Simulate = "simulated", "dgxa100"
	if config != "" {
		o.ConfigFile = filepath.Join(b.TempDir(), "config.yaml")
		if err := os.WriteFile(o.ConfigFile, []byte(config), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	v, err := plugin.NewVendor(o)
	if err != nil {
		b.Fatal(err)
	}
	k := plugintest.Start(b, deviceplugin.Config{Vendor: accelerator.VendorNVIDIA, ConfigFile: o.ConfigFile}, v, nil).Kubelet
	p, err := k.WaitPlugin(context.Background(), resource)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkAllocate measures Allocate round trips over the unix socket.
func BenchmarkAllocate(b *testing.B) {
	for _, bc := range []struct {
		name, config, resource string
		n                      int
	}{
		{"1GPU", "", "nvidia.com/gpu", 1},
		{"8GPUs", "", "nvidia.com/gpu", 8},
		{"8GPUsx16replicas", "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 16\n", "nvidia.com/gpu.shared", 8},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := benchPlugin(b, bc.config, bc.resource)
			ids := ids(p.Devices())
			var req []string
			for i := 0; i < bc.n; i++ {
				req = append(req, ids[i*len(ids)/bc.n])
			}
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := p.Allocate(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
