// Package plugintest runs a device-plugin Vendor under pkg/deviceplugin's
// Supervisor in front of the fake kubelet (test/kubelet), for the tests and
// benchmarks of the vendors and of the node agent. It is separate from
// test/kubelet, which pkg/deviceplugin's own tests import.
package plugintest

import (
	"context"
	"sync"
	"testing"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/deviceplugin"
	"github.com/accelstack/accelstack/test/kubelet"
	"github.com/accelstack/accelstack/test/testutil"
)

// Plugin is a Vendor run by a Supervisor in front of a fake kubelet.
type Plugin struct {
	// Kubelet is the fake kubelet the plugin registers with.
	Kubelet *kubelet.Kubelet

	once sync.Once
	stop func()
}

// Start runs v under a Supervisor with cfg in front of a new fake kubelet,
// in a new short plugin directory (cfg.PluginDir is set to it), until Stop
// or the end of the test. observe, when not nil, receives every Event of
// the Supervisor and must not block for long. An error of the Supervisor's
// Run fails the test.
func Start(t testing.TB, cfg deviceplugin.Config, v deviceplugin.Vendor, observe func(deviceplugin.Event)) *Plugin {
	t.Helper()
	cfg.PluginDir = testutil.ShortDir(t)
	k, err := kubelet.Start(cfg.PluginDir)
	if err != nil {
		t.Fatal(err)
	}
	sup := deviceplugin.NewSupervisor(cfg, v)
	if observe != nil {
		sup.Observe(observe)
	}
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
	done := make(chan error, 1)
	go func() { done <- sup.Run(ctx) }()
	p := &Plugin{Kubelet: k}
	p.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		k.Stop()
	}
	t.Cleanup(p.Stop)
	return p
}

// Stop ends the plugin, then the fake kubelet; later calls do nothing.
func (p *Plugin) Stop() { p.once.Do(p.stop) }
