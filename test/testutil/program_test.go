package testutil

import (
	"os"
	"slices"
	"testing"
)

func TestProgramCleansUpInReverse(t *testing.T) {
	p := &Program{}
	var order []int
	dir := p.TempDir()
	p.Cleanup(func() { order = append(order, 1) })
	p.Cleanup(func() { order = append(order, 2) })
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("TempDir %s: %v", dir, err)
	}
	p.Close()
	if !slices.Equal(order, []int{2, 1}) {
		t.Errorf("cleanups ran in the order %v, want the last registered first", order)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("TempDir %s after Close: %v, want it removed", dir, err)
	}
	if p.Failed() {
		t.Error("Failed without a Fatal")
	}
	p.Close()
	if len(order) != 2 {
		t.Errorf("a second Close ran the cleanups again: %v", order)
	}
}
