package simulator

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/accelstack/accelstack/pkg/ascend"
)

// Simulated machine profiles for --simulate.
const (
	// ProfileAscend910B8 is an Atlas 800T A2-like server: 8 Ascend 910B
	// chips, one per card.
	ProfileAscend910B8 = "ascend910b-8"
	// ProfileAscend910B8Dual is 8 Ascend 910B chips on 4 cards, two per
	// card, with logical and physical IDs that differ.
	ProfileAscend910B8Dual = "ascend910b-8-dual"
	// ProfileAscend310P4 is 4 Ascend 310P3 chips, one per card.
	ProfileAscend310P4 = "ascend310p-4"
)

// Profiles lists the simulated profiles.
func Profiles() []string {
	return []string{ProfileAscend910B8, ProfileAscend910B8Dual, ProfileAscend310P4}
}

// simChip is one simulated chip's state.
type simChip struct {
	card, dev, logic, phy int
	info                  ascend.ChipInfo
	health, network       uint32
	errors                []uint32
	ip                    string
	util                  uint32
	temp                  int
	power                 float64
	hbm, mem              ascend.Memory
}

// Simulator is a Lib over a simulated machine, with injectable faults and
// recoveries. It notifies FaultEvents on every injected change, as DCMI's
// fault-event subscription does.
type Simulator struct {
	profile string

	mu     sync.Mutex
	chips  []*simChip
	inited bool
	events chan struct{}
}

var (
	_ ascend.Lib          = (*Simulator)(nil)
	_ ascend.FaultEventer = (*Simulator)(nil)
)

// New builds the named profile.
func New(profile string) (*Simulator, error) {
	s := &Simulator{profile: profile, events: make(chan struct{}, 1)}
	const gib = 1 << 30
	switch profile {
	case ProfileAscend910B8, ProfileAscend910B8Dual:
		perCard := 1
		if profile == ProfileAscend910B8Dual {
			perCard = 2
		}
		for i := 0; i < 8; i++ {
			c := &simChip{card: i / perCard, dev: i % perCard, logic: i, phy: i,
				info: ascend.ChipInfo{Type: "Ascend", Name: "910B", Version: "V1", AICores: 20},
				ip:   fmt.Sprintf("192.168.100.%d", 101+i), temp: 45, power: 95.5,
				hbm: ascend.Memory{TotalBytes: 64 * gib, UsedBytes: 3 * gib}, mem: ascend.Memory{TotalBytes: 32 * gib, UsedBytes: 2 * gib}}
			if perCard == 2 {
				// Logical IDs follow enumeration; physical IDs pair the
				// chips of a card the other way round.
				c.phy = i ^ 1
			}
			s.chips = append(s.chips, c)
		}
	case ProfileAscend310P4:
		for i := 0; i < 4; i++ {
			s.chips = append(s.chips, &simChip{card: i, logic: i, phy: i,
				info: ascend.ChipInfo{Type: "Ascend", Name: "310P3", Version: "V1", AICores: 8},
				temp: 40, power: 30, mem: ascend.Memory{TotalBytes: 24 * gib, UsedBytes: gib}})
		}
	default:
		return nil, fmt.Errorf("unknown simulated profile %q (want one of %v)", profile, Profiles())
	}
	return s, nil
}

// Profile returns the profile name.
func (s *Simulator) Profile() string { return s.profile }

// FaultEvents signals (coalesced) each injected fault or recovery.
func (s *Simulator) FaultEvents() <-chan struct{} { return s.events }

func (s *Simulator) notify() {
	select {
	case s.events <- struct{}{}:
	default:
	}
}

// errNotInit mirrors DCMI's answer before dcmi_init.
var errNotInit = errors.New("simulated DCMI not initialised")

func (s *Simulator) chip(card, dev int) (*simChip, error) {
	if !s.inited {
		return nil, errNotInit
	}
	for _, c := range s.chips {
		if c.card == card && c.dev == dev {
			return c, nil
		}
	}
	return nil, &ascend.ReturnError{Func: "simulated", Code: -8001}
}

func (s *Simulator) byPhy(phy int) (*simChip, error) {
	for _, c := range s.chips {
		if c.phy == phy {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no simulated chip with physical ID %d", phy)
}

// SetHealth sets a chip's DCMI health code and error codes, by physical ID.
func (s *Simulator) SetHealth(phy int, health uint32, codes ...uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.byPhy(phy)
	if err != nil {
		return err
	}
	c.health, c.errors = health, append([]uint32(nil), codes...)
	s.notify()
	return nil
}

// SetNetworkHealth sets a chip's network detection result, by physical ID.
func (s *Simulator) SetNetworkHealth(phy int, result uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.byPhy(phy)
	if err != nil {
		return err
	}
	c.network = result
	s.notify()
	return nil
}

// SetUtilization sets a chip's AI core utilization, by physical ID.
func (s *Simulator) SetUtilization(phy int, util uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.byPhy(phy)
	if err != nil {
		return err
	}
	c.util = util
	return nil
}

// Init initialises the simulated library.
func (s *Simulator) Init() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inited = true
	return nil
}

// Shutdown is a no-op: a simulator outlives restarts of the plugin.
func (s *Simulator) Shutdown() error { return nil }

// CardList returns the card IDs.
func (s *Simulator) CardList() ([]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inited {
		return nil, errNotInit
	}
	seen := map[int]bool{}
	var out []int
	for _, c := range s.chips {
		if !seen[c.card] {
			seen[c.card] = true
			out = append(out, c.card)
		}
	}
	sort.Ints(out)
	return out, nil
}

// DeviceNumInCard counts a card's chips.
func (s *Simulator) DeviceNumInCard(card int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inited {
		return 0, errNotInit
	}
	n := 0
	for _, c := range s.chips {
		if c.card == card {
			n++
		}
	}
	return n, nil
}

// get runs f on a chip under the lock.
func (s *Simulator) get(card, dev int, f func(c *simChip)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.chip(card, dev)
	if err != nil {
		return err
	}
	f(c)
	return nil
}

// LogicID returns the chip's logical ID.
func (s *Simulator) LogicID(card, dev int) (id int, err error) {
	err = s.get(card, dev, func(c *simChip) { id = c.logic })
	return id, err
}

// PhysicalID maps a logical ID.
func (s *Simulator) PhysicalID(logic int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.chips {
		if c.logic == logic {
			return c.phy, nil
		}
	}
	return 0, fmt.Errorf("no simulated chip with logical ID %d", logic)
}

// ChipInfo returns the chip info.
func (s *Simulator) ChipInfo(card, dev int) (ci ascend.ChipInfo, err error) {
	err = s.get(card, dev, func(c *simChip) { ci = c.info })
	return ci, err
}

// Health returns the health code.
func (s *Simulator) Health(card, dev int) (h uint32, err error) {
	err = s.get(card, dev, func(c *simChip) { h = c.health })
	return h, err
}

// ErrorCodes returns the error codes.
func (s *Simulator) ErrorCodes(card, dev int) (codes []uint32, err error) {
	err = s.get(card, dev, func(c *simChip) { codes = append([]uint32(nil), c.errors...) })
	return codes, err
}

// NetworkHealth returns the network detection result; chips without an
// address (310P) report NetworkInit.
func (s *Simulator) NetworkHealth(card, dev int) (r uint32, err error) {
	err = s.get(card, dev, func(c *simChip) {
		r = c.network
		if c.ip == "" && r == ascend.NetworkOK {
			r = ascend.NetworkInit
		}
	})
	return r, err
}

// DeviceIP returns the RoCE address.
func (s *Simulator) DeviceIP(card, dev int) (ip string, err error) {
	err = s.get(card, dev, func(c *simChip) { ip = c.ip })
	return ip, err
}

// Utilization returns the AI core utilization.
func (s *Simulator) Utilization(card, dev int) (u uint32, err error) {
	err = s.get(card, dev, func(c *simChip) { u = c.util })
	return u, err
}

// Temperature returns the temperature.
func (s *Simulator) Temperature(card, dev int) (t int, err error) {
	err = s.get(card, dev, func(c *simChip) { t = c.temp })
	return t, err
}

// Power returns the power draw.
func (s *Simulator) Power(card, dev int) (w float64, err error) {
	err = s.get(card, dev, func(c *simChip) { w = c.power })
	return w, err
}

// HBM returns the HBM; chips without HBM report ErrNotSupported.
func (s *Simulator) HBM(card, dev int) (m ascend.Memory, err error) {
	err = s.get(card, dev, func(c *simChip) { m = c.hbm })
	if err == nil && m.TotalBytes == 0 {
		return m, fmt.Errorf("HBM of a %s chip: %w", s.profile, ascend.ErrNotSupported)
	}
	return m, err
}

// Memory returns the DDR memory.
func (s *Simulator) Memory(card, dev int) (m ascend.Memory, err error) {
	err = s.get(card, dev, func(c *simChip) { m = c.mem })
	return m, err
}
