package queue

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestParseShapes(t *testing.T) {
	data := map[string]string{
		"small":       "- {cpu: \"4\", memory: 16Gi}\n- {cpu: \"8\", memory: 32Gi, nvidia.com/gpu: \"1\"}\n",
		"block":       "- cpu: 2\n  memory: 4Gi\n  huawei.com/Ascend910: 8\n",
		"empty":       "[]\n",
		"blank":       "",
		"malformed":   "- {cpu: \"4\"\n",
		"badquantity": "- {cpu: lots}\n",
		"notalist":    "cpu: 4\n",
		"nested":      "- {resources: {cpu: \"4\"}}\n",
		"duplicate":   "- {cpu: \"4\", cpu: \"8\"}\n",
		"custom":      "- {example.com/foo: \"2\"}\n",
	}
	tests := []struct {
		profile string
		want    []Shape
		wantErr string // substring of the error; "" means no error
	}{
		{profile: "small", want: []Shape{
			Shape(rl("cpu", "4", "memory", "16Gi")),
			Shape(rl("cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "1")),
		}},
		{profile: "block", want: []Shape{Shape(rl("cpu", "2", "memory", "4Gi", "huawei.com/Ascend910", "8"))}},
		// A shape's keys are resource names, so any name is taken as one.
		{profile: "custom", want: []Shape{Shape(rl("example.com/foo", "2"))}},
		{profile: "missing", wantErr: `no key "missing"`},
		{profile: "empty", wantErr: "lists no shapes"},
		{profile: "blank", wantErr: "lists no shapes"},
		{profile: "malformed", wantErr: `key "malformed"`},
		{profile: "badquantity", wantErr: `key "badquantity"`},
		{profile: "notalist", wantErr: `key "notalist"`},
		{profile: "nested", wantErr: `key "nested"`},
		{profile: "duplicate", wantErr: `key "duplicate"`},
	}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			got, err := ParseShapes(data, tt.profile)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseShapes(%q) = %v, want an error", tt.profile, got)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q does not contain %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "t9k-system/resource-shapes") {
					t.Errorf("error %q does not name the ConfigMap", err)
				}
				if got != nil {
					t.Errorf("ParseShapes returned %v along with its error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseShapes(%q): %v", tt.profile, err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("ParseShapes(%q) = %d shapes, want %d", tt.profile, len(got), len(tt.want))
			}
			for i := range got {
				if ok, diff := sameResources(corev1.ResourceList(got[i]), corev1.ResourceList(tt.want[i])); !ok {
					t.Errorf("shape %d: %s", i, diff)
				}
			}
		})
	}
}

func TestParseShapesNilData(t *testing.T) {
	if _, err := ParseShapes(nil, "small"); err == nil {
		t.Error("ParseShapes(nil data) succeeded, want an error")
	}
}

func TestFits(t *testing.T) {
	shapes := []Shape{
		Shape(rl("cpu", "4", "memory", "16Gi")),
		Shape(rl("cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "1")),
	}
	tests := []struct {
		name     string
		shapes   []Shape
		requests corev1.ResourceList
		wantOK   bool
		wantRes  corev1.ResourceName
	}{
		{name: "fits the first", shapes: shapes, requests: rl("cpu", "2", "memory", "8Gi"), wantOK: true},
		{name: "fits the first exactly", shapes: shapes, requests: rl("cpu", "4", "memory", "16Gi"), wantOK: true},
		{name: "fits only the second", shapes: shapes, requests: rl("cpu", "6", "memory", "8Gi"), wantOK: true},
		{name: "gpu fits only the second", shapes: shapes, requests: rl("cpu", "1", "nvidia.com/gpu", "1"), wantOK: true},
		{name: "no requests fit", shapes: shapes, requests: corev1.ResourceList{}, wantOK: true},
		{name: "zero request of an unnamed resource fits", shapes: shapes, requests: rl("cpu", "1", "huawei.com/Ascend910", "0"), wantOK: true},
		{name: "larger than every shape: first shape's resource", shapes: shapes, requests: rl("cpu", "16", "memory", "8Gi"), wantRes: "cpu"},
		{name: "first and second shape blocked by different resources: the first's", shapes: shapes, requests: rl("cpu", "6", "nvidia.com/gpu", "2"), wantRes: "cpu"},
		{name: "too much memory for both", shapes: shapes, requests: rl("cpu", "1", "memory", "64Gi"), wantRes: "memory"},
		{name: "two gpus fit no shape", shapes: shapes, requests: rl("cpu", "1", "nvidia.com/gpu", "2"), wantRes: "nvidia.com/gpu"},
		{name: "resource no shape names refuses", shapes: shapes, requests: rl("cpu", "1", "huawei.com/Ascend910", "1"), wantRes: "huawei.com/Ascend910"},
		{name: "mig not named", shapes: shapes, requests: rl("nvidia.com/mig-1g.10gb", "1"), wantRes: "nvidia.com/mig-1g.10gb"},
		{name: "no shapes: nothing fits", requests: rl("cpu", "1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, res := Fits(tt.shapes, tt.requests)
			if ok != tt.wantOK || res != tt.wantRes {
				t.Errorf("Fits = (%v, %q), want (%v, %q)", ok, res, tt.wantOK, tt.wantRes)
			}
		})
	}
}
