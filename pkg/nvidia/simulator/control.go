package simulator

import (
	"fmt"
	"strconv"
	"strings"
)

// RunCommand carries out one line of the simulated device plugin's control
// socket (--simulate-control-socket; pkg/simcontrol is the protocol):
//
//	xid <uuid|index> <xid>     inject an XID event
//	lost <uuid|index> <bool>   make NVML checks of the device fail or pass
//	util <uuid|index> <pct>    set a whole GPU's utilization reading (0-100)
func (s *Simulator) RunCommand(line string) error {
	f := strings.Fields(line)
	if len(f) != 3 {
		return fmt.Errorf("want '<xid|lost|util> <device> <value>', got %q", line)
	}
	switch f[0] {
	case "xid":
		x, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("bad xid %q", f[2])
		}
		return s.InjectXID(f[1], x)
	case "lost":
		b, err := strconv.ParseBool(f[2])
		if err != nil {
			return fmt.Errorf("bad bool %q", f[2])
		}
		return s.SetLost(f[1], b)
	case "util":
		pct, err := strconv.ParseUint(f[2], 10, 32)
		if err != nil || pct > 100 {
			return fmt.Errorf("bad utilization %q: want a percentage from 0 to 100", f[2])
		}
		return s.SetUtilization(f[1], uint32(pct))
	}
	return fmt.Errorf("unknown command %q", f[0])
}
