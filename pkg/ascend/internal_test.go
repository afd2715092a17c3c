package ascend

import "testing"

func TestKindOf(t *testing.T) {
	tests := []struct{ name, want string }{
		{"910B", "Ascend910"}, {"910B3", "Ascend910"}, {"910", "Ascend910"},
		{"310P3", "Ascend310P"}, {"310", "Ascend310"}, {"", ""}, {"A100", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := KindOf(tc.name); got != tc.want {
				t.Errorf("KindOf(%q) = %q, want %q", tc.name, got, tc.want)
			}
		})
	}
}
