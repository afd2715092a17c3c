package main

import (
	"context"
	"flag"
	"os"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/cli"
	"github.com/accelstack/accelstack/pkg/deviceplugin"
)

// envOf finds the environment variable cli.FlagSet.Env adds to a usage.
var envOf = regexp.MustCompile(`\[\$([A-Z_]+)\]$`)

// TestCommandLine pins every flag's name, environment variable and
// default: DaemonSets and users' scripts set them, whichever vendor
// registers them.
func TestCommandLine(t *testing.T) {
	type want struct{ env, def string }
	wants := map[string]want{
		"vendor":                  {"VENDOR", "nvidia"},
		"backend":                 {"BACKEND", ""},
		"simulate":                {"SIMULATE", ""},
		"simulate-control-socket": {"SIMULATE_CONTROL_SOCKET", ""},
		"device-plugin-path":      {"DEVICE_PLUGIN_PATH", "/var/lib/kubelet/device-plugins/"},
		"fail-on-init-error":      {"FAIL_ON_INIT_ERROR", "true"},
		"config-file":             {"CONFIG_FILE", ""},
		"metrics-address":         {"METRICS_ADDRESS", ""},
		// NVIDIA's.
		"mig-strategy":         {"MIG_STRATEGY", "none"},
		"pass-device-specs":    {"PASS_DEVICE_SPECS", "false"},
		"device-list-strategy": {"DEVICE_LIST_STRATEGY", "envvar"},
		"device-id-strategy":   {"DEVICE_ID_STRATEGY", "uuid"},
		"nvidia-dev-root":      {"NVIDIA_DEV_ROOT", "/dev"},
		"health-quiet-period":  {"HEALTH_QUIET_PERIOD", "5m0s"},
		// Ascend's.
		"dcmi-library":        {"DCMI_LIBRARY", "libdcmi.so"},
		"use-ascend-docker":   {"USE_ASCEND_DOCKER", "true"},
		"volcano":             {"VOLCANO", "false"},
		"node-name":           {"NODE_NAME", ""},
		"kubeconfig":          {"KUBECONFIG", ""},
		"health-check-period": {"HEALTH_CHECK_PERIOD", "5s"},
		// pkg/cli's.
		"version": {"", "false"},
		"v":       {"", "0"},
		"vmodule": {"", ""},
	}
	fs, _ := command()
	got := map[string]want{}
	fs.VisitAll(func(f *flag.Flag) {
		w := want{def: f.DefValue}
		if m := envOf.FindStringSubmatch(f.Usage); m != nil {
			w.env = m[1]
		}
		got[f.Name] = w
	})
	if diff := cmp.Diff(wants, got, cmp.AllowUnexported(want{})); diff != "" {
		t.Errorf("flags (-want +got):\n%s", diff)
	}
}

// TestVendors builds each registered vendor on its simulator: its name is
// the --vendor value, and its first backend the default.
func TestVendors(t *testing.T) {
	profiles := map[string]string{accelerator.VendorNVIDIA: "dgxa100", accelerator.VendorAscend: "ascend910b-8"}
	defaults := map[string]string{accelerator.VendorNVIDIA: accelerator.BackendNVML, accelerator.VendorAscend: accelerator.BackendDCMI}
	if got, want := len(vendors), len(profiles); got != want {
		t.Fatalf("%d vendors registered, want %d: give each a simulated profile here", got, want)
	}
	for _, r := range vendors {
		t.Run(r.Name, func(t *testing.T) {
			if got := vendors.DefaultBackend(r.Name); got != defaults[r.Name] {
				t.Errorf("default backend %q, want %q", got, defaults[r.Name])
			}
			fs := cli.NewFlagSet("test", "test")
			newVendor := r.AddFlags(fs)
			unsetEnv(t, fs)
			if err := fs.Parse(nil); err != nil {
				t.Fatal(err)
			}
			cfg := deviceplugin.Config{Vendor: r.Name, Backend: accelerator.BackendSimulated, Simulate: profiles[r.Name], FailOnInitError: true}
			if err := cfg.Validate(vendors); err != nil {
				t.Fatal(err)
			}
			v, err := newVendor(context.Background(), &cfg)
			if err != nil {
				t.Fatal(err)
			}
			if v.Name() != r.Name {
				t.Errorf("vendor %q built a vendor named %q", r.Name, v.Name())
			}
		})
	}
}

// unsetEnv unsets the flags' environment variables for the test, so that
// the flags keep their defaults.
func unsetEnv(t *testing.T, fs *cli.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if m := envOf.FindStringSubmatch(f.Usage); m != nil {
			t.Setenv(m[1], "") // restored after the test
			if err := os.Unsetenv(m[1]); err != nil {
				t.Fatal(err)
			}
		}
	})
}
