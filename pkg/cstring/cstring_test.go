package cstring

import "testing"

func TestString(t *testing.T) {
	if got := String([]int8{'0', '0', ':', 0, 'x'}); got != "00:" {
		t.Errorf("String(terminated int8) = %q, want %q", got, "00:")
	}
	if got := String([]uint8("910B")); got != "910B" {
		t.Errorf("String(unterminated uint8) = %q, want %q", got, "910B")
	}
	if got := String([]uint8{}); got != "" {
		t.Errorf("String(empty) = %q, want empty", got)
	}
}
