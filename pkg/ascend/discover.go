package ascend

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/accelstack/accelstack/pkg/accelerator"
)

// Chip is one discovered NPU chip.
type Chip struct {
	// Card and Device address the chip in DCMI calls.
	Card, Device int
	// LogicID is the chip's logical ID (CANN runtime numbering).
	LogicID int
	// PhyID is the physical ID: /dev/davinci<PhyID>, ASCEND_VISIBLE_DEVICES.
	PhyID int
	// Info is the chip's type, name and AI cores.
	Info ChipInfo
	// IP is the chip's RoCE address, "" when it has none.
	IP string
}

// Model returns the chip model as Ascend names it, e.g. Ascend910B.
func (c Chip) Model() string { return c.Info.Type + c.Info.Name }

// Kind returns the chip kind (Ascend910, Ascend310P or Ascend310), the
// last part of its resource name and the prefix of its device IDs.
func (c Chip) Kind() string { return KindOf(c.Info.Name) }

// KindOf maps a DCMI chip name (910B, 910B3, 310P3, 310) to a chip kind;
// unknown names return "".
func KindOf(name string) string {
	n := strings.ToUpper(name)
	switch {
	case strings.HasPrefix(n, "910"):
		return "Ascend910"
	case strings.HasPrefix(n, "310P"):
		return "Ascend310P"
	case strings.HasPrefix(n, "310"):
		return "Ascend310"
	}
	return ""
}

// ID returns the device ID advertised to the kubelet, e.g. Ascend910-3.
func (c Chip) ID() string { return c.Kind() + "-" + strconv.Itoa(c.PhyID) }

// Resource returns the extended resource name, e.g. huawei.com/Ascend910.
func (c Chip) Resource() string { return accelerator.HuaweiDomain + c.Kind() }

// Discover lists every chip through lib, which must be initialised,
// ordered by physical ID. Chips of an unknown kind are an error.
func Discover(lib Lib) ([]Chip, error) {
	cards, err := lib.CardList()
	if err != nil {
		return nil, fmt.Errorf("listing NPU cards: %w", err)
	}
	var out []Chip
	for _, card := range cards {
		n, err := lib.DeviceNumInCard(card)
		if err != nil {
			return nil, fmt.Errorf("counting chips of card %d: %w", card, err)
		}
		for dev := 0; dev < n; dev++ {
			c := Chip{Card: card, Device: dev}
			if c.LogicID, err = lib.LogicID(card, dev); err != nil {
				return nil, fmt.Errorf("logical ID of card %d chip %d: %w", card, dev, err)
			}
			if c.PhyID, err = lib.PhysicalID(c.LogicID); err != nil {
				return nil, fmt.Errorf("physical ID of logical chip %d: %w", c.LogicID, err)
			}
			if c.Info, err = lib.ChipInfo(card, dev); err != nil {
				return nil, fmt.Errorf("chip info of card %d chip %d: %w", card, dev, err)
			}
			if c.Kind() == "" {
				return nil, fmt.Errorf("card %d chip %d: unsupported chip %q", card, dev, c.Info.Type+c.Info.Name)
			}
			// 310-series chips have no RoCE port; a missing address is
			// not a discovery failure.
			if ip, err := lib.DeviceIP(card, dev); err == nil {
				c.IP = ip
			}
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PhyID < out[j].PhyID })
	return out, nil
}
