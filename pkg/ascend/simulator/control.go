package simulator

import (
	"fmt"
	"strconv"
	"strings"
)

// RunCommand carries out one line of the simulated device plugin's control
// socket (--simulate-control-socket; pkg/simcontrol is the protocol):
//
//	health <phyID> <code> [<errorcode>...]   set the DCMI health code
//	network <phyID> <result>                 set the network detection result
func (s *Simulator) RunCommand(line string) error {
	f := strings.Fields(line)
	if len(f) < 3 {
		return fmt.Errorf("want 'health <phyID> <code> [codes...]' or 'network <phyID> <result>', got %q", line)
	}
	var nums []uint32
	phy, err := strconv.Atoi(f[1])
	if err != nil {
		return fmt.Errorf("bad physical ID %q", f[1])
	}
	for _, s := range f[2:] {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return fmt.Errorf("bad number %q", s)
		}
		nums = append(nums, uint32(n))
	}
	switch f[0] {
	case "health":
		return s.SetHealth(phy, nums[0], nums[1:]...)
	case "network":
		return s.SetNetworkHealth(phy, nums[0])
	}
	return fmt.Errorf("unknown command %q", f[0])
}
