package v1

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

func TestParse(t *testing.T) {
	testCases := []struct {
		name    string
		in      string
		want    *Config
		wantErr string
	}{
		{name: "minimal", in: "version: v1\n", want: &Config{Version: "v1"}},
		{name: "flags", in: `version: v1
flags:
  migStrategy: mixed
  failOnInitError: false
  plugin:
    passDeviceSpecs: true
    deviceListStrategy: volume-mounts
    deviceIDStrategy: index
`, want: &Config{Version: "v1", Flags: Flags{
			MigStrategy: ptr("mixed"), FailOnInitError: ptr(false),
			Plugin: &PluginFlags{PassDeviceSpecs: ptr(true), DeviceListStrategy: ptr("volume-mounts"), DeviceIDStrategy: ptr("index")},
		}}},
		{name: "time-slicing", in: `version: v1
sharing:
  timeSlicing:
    renameByDefault: true
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 10
    - name: nvidia.com/mig-1g.5gb
      replicas: 2
      devices: [0, "1:2", MIG-abc]
    - name: nvidia.com/mig-2g.10gb
      replicas: 3
      devices: all
`, want: &Config{Version: "v1", Sharing: Sharing{TimeSlicing: &TimeSlicing{
			RenameByDefault: true, FailRequestsGreaterThanOne: true,
			Resources: []ReplicatedResource{
				{Name: "nvidia.com/gpu", Replicas: 10},
				{Name: "nvidia.com/mig-1g.5gb", Replicas: 2, Devices: ReplicatedDevices{List: []string{"0", "1:2", "MIG-abc"}}},
				{Name: "nvidia.com/mig-2g.10gb", Replicas: 3, Devices: ReplicatedDevices{All: true}},
			},
		}}}},
		{name: "json", in: `{"version":"v1","flags":{"migStrategy":"single"}}`, want: &Config{Version: "v1", Flags: Flags{MigStrategy: ptr("single")}}},
		{name: "missing version", in: "flags: {}\n", wantErr: `version: must be "v1"`},
		{name: "wrong version", in: "version: v2\n", wantErr: `version: must be "v1", got "v2"`},
		{name: "unknown top-level field", in: "version: v1\nresources: {}\n", wantErr: `unknown field "resources"`},
		{name: "unknown nested field", in: "version: v1\nflags:\n  plugin:\n    cdiAnnotationPrefix: x\n", wantErr: `unknown field "cdiAnnotationPrefix"`},
		{name: "duplicate field", in: "version: v1\nversion: v1\n", wantErr: "version"},
		{name: "bad yaml", in: "version: [v1\n", wantErr: "yaml"},
		{name: "wrong type", in: "version: v1\nflags:\n  failOnInitError: maybe\n", wantErr: "failOnInitError"},
		{name: "unknown mig strategy", in: "version: v1\nflags:\n  migStrategy: auto\n", wantErr: "flags.migStrategy"},
		{name: "unknown list strategy", in: "version: v1\nflags:\n  plugin:\n    deviceListStrategy: cdi-cri\n", wantErr: "flags.plugin.deviceListStrategy"},
		{name: "unknown id strategy", in: "version: v1\nflags:\n  plugin:\n    deviceIDStrategy: serial\n", wantErr: "flags.plugin.deviceIDStrategy"},
		{name: "unknown shared policy", in: "version: v1\nflags:\n  plugin:\n    sharedDevicesAllocationPolicy: random\n", wantErr: "sharedDevicesAllocationPolicy"},
		{name: "zero replicas", in: "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 0\n", wantErr: "sharing.timeSlicing.resources[0].replicas: must be between 1 and 128"},
		{name: "too many replicas", in: "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 100000\n", wantErr: "resources[0].replicas: must be between 1 and 128, got 100000"},
		{name: "rename onto another listed resource", in: "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/mig-1g.5gb\n      rename: nvidia.com/gpu\n      replicas: 2\n    - name: nvidia.com/gpu\n      replicas: 2\n", wantErr: `resources[0].rename: "nvidia.com/gpu" is the name of another listed resource`},
		{name: "two renames to one name", in: "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/mig-1g.5gb\n      rename: nvidia.com/small\n      replicas: 2\n    - name: nvidia.com/mig-2g.10gb\n      rename: nvidia.com/small\n      replicas: 2\n", wantErr: `resources[1].rename: "nvidia.com/small" is also the rename of "nvidia.com/mig-1g.5gb"`},
		{name: "negative replicas", in: "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: -2\n", wantErr: "resources[0].replicas"},
		{name: "missing name", in: "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - replicas: 2\n", wantErr: "resources[0].name: must be set"},
		{name: "bad name", in: "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n      replicas: 2\n", wantErr: "resources[0].name"},
		{name: "bad rename", in: "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      rename: x/-y\n      replicas: 2\n", wantErr: "resources[0].rename"},
		{name: "duplicate resource", in: "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n    - name: nvidia.com/gpu\n      replicas: 3\n", wantErr: "resources[1].name"},
		{name: "bad devices", in: "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n      devices: some\n", wantErr: "devices"},
		{name: "negative device index", in: "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n      devices: [-1]\n", wantErr: "device index"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse() error = %v, want it to contain %q", err, tc.wantErr)
				}
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("Parse() error %v does not wrap ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load("/nonexistent/config.yaml"); err == nil || !strings.Contains(err.Error(), "reading config file") {
		t.Fatalf("Load() = %v, want a read error", err)
	}
}

// FuzzParse checks that Parse never panics and that whatever it accepts
// is valid and survives a round trip.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"version: v1\n",
		"version: v1\nflags:\n  migStrategy: mixed\n",
		"version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n      devices: [0, 1]\n",
		`{"version":"v1","sharing":{"timeSlicing":{"resources":[{"name":"a.b/c","replicas":1,"devices":"all"}]}}}`,
		"version: [\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted config fails Validate: %v", err)
		}
	})
}
