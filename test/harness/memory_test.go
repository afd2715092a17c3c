package harness

import (
	"os"
	"strings"
	"testing"
)

// sink keeps the busy loop of TestProcessMemory from being optimized away.
var sink int

func TestProcessMemory(t *testing.T) {
	m, err := ProcessMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS == 0 || m.Anon == 0 || m.File == 0 || m.Anon+m.File > m.RSS+(1<<20) || m.Peak < m.RSS {
		t.Errorf("ProcessMemory(self) = %+v, want a non-zero RSS split into anonymous and file-mapped pages", m)
	}
	if s := m.String(); !strings.Contains(s, " MiB (anonymous ") || !strings.Contains(s, ", file-mapped ") {
		t.Errorf("String() = %q", s)
	}
	if _, err := ProcessMemory(-1); err == nil {
		t.Error("ProcessMemory(-1): no error")
	}
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1e8; i++ {
		sink += i
	}
	after, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("ProcessCPU(self) went from %v to %v over a busy loop", before, after)
	}
	if _, err := ProcessCPU(-1); err == nil {
		t.Error("ProcessCPU(-1): no error")
	}
}
