package ascend

import "errors"

// ChipHealth is one chip's health as read by ReadHealth.
type ChipHealth struct {
	// Healthy is false for major or critical faults and failed reads.
	Healthy bool
	// NetworkHealthy is false when the chip's RoCE link is down.
	NetworkHealthy bool
	// Health is the DCMI health code.
	Health uint32
	// ErrorCodes are the chip's error codes.
	ErrorCodes []uint32
}

// Usable reports whether the chip may be allocated.
func (h ChipHealth) Usable() bool { return h.Healthy && h.NetworkHealthy }

// FaultEventer is a Lib that signals faults as they happen: the simulator,
// and DCMI through dcmi_subscribe_fault_event.
type FaultEventer interface {
	// FaultEvents returns a channel that signals (coalesced) each fault or
	// recovery, or nil when faults can only be polled.
	FaultEvents() <-chan struct{}
}

// ReadHealth reads one chip's health through lib: its health code and
// error codes, and the RoCE link of a chip with an address.
func ReadHealth(lib Lib, c Chip) ChipHealth {
	var out ChipHealth
	code, err := lib.Health(c.Card, c.Device)
	out.Health = code
	out.Healthy = err == nil && HealthyCode(code)
	if codes, err := lib.ErrorCodes(c.Card, c.Device); err == nil {
		out.ErrorCodes = codes
	}
	out.NetworkHealthy = true
	if c.IP != "" {
		r, err := lib.NetworkHealth(c.Card, c.Device)
		out.NetworkHealthy = errors.Is(err, ErrNotSupported) || err == nil && networkHealthy(r)
	}
	return out
}
