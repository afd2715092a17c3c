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
func (s *Simulator) RunCommand(line string) error {
	f := strings.Fields(line)
	if len(f) != 3 {
		return fmt.Errorf("want '<xid|lost> <device> <value>', got %q", line)
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
	}
	return fmt.Errorf("unknown command %q", f[0])
}
