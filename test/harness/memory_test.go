package harness

import (
	"os"
	"strings"
	"testing"
)

func TestProcessMemory(t *testing.T) {
	m, err := ProcessMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS == 0 || m.Anon == 0 || m.File == 0 || m.Anon+m.File > m.RSS+(1<<20) {
		t.Errorf("ProcessMemory(self) = %+v, want a non-zero RSS split into anonymous and file-mapped pages", m)
	}
	if s := m.String(); !strings.Contains(s, " MiB (anonymous ") || !strings.Contains(s, ", file-mapped ") {
		t.Errorf("String() = %q", s)
	}
	if _, err := ProcessMemory(-1); err == nil {
		t.Error("ProcessMemory(-1): no error")
	}
}
