package ascend

import (
	"errors"
	"fmt"
	"strconv"
)

// Lib is the part of Huawei's DCMI library (libdcmi.so) that accelstack
// uses, with chips addressed the DCMI way: a card ID and a device index
// within the card. Implementations: the cgo binding (OpenDCMI) and the
// Simulator. Methods must be safe for concurrent use. A function the
// library does not export returns an error wrapping ErrNotSupported; a
// failing call returns an error wrapping a *ReturnError.
type Lib interface {
	// Init initialises the library; it must succeed before any other call.
	Init() error
	// Shutdown releases the library. Calls after it fail.
	Shutdown() error
	// CardList returns the IDs of the NPU cards.
	CardList() ([]int, error)
	// DeviceNumInCard returns how many chips a card holds.
	DeviceNumInCard(card int) (int, error)
	// LogicID returns the logical ID of a chip, as used by the CANN runtime.
	LogicID(card, device int) (int, error)
	// PhysicalID maps a logical ID to the physical ID that names the chip in
	// /dev/davinci<phyID> and in ASCEND_VISIBLE_DEVICES.
	PhysicalID(logicID int) (int, error)
	// ChipInfo returns the chip's type, name and AI core count.
	ChipInfo(card, device int) (ChipInfo, error)
	// Health returns the DCMI health code: HealthOK, HealthMinor,
	// HealthMajor or HealthCritical.
	Health(card, device int) (uint32, error)
	// ErrorCodes returns the chip's current error codes, empty when none.
	ErrorCodes(card, device int) ([]uint32, error)
	// NetworkHealth returns the RoCE link detection result, NetworkOK
	// when the link works.
	NetworkHealth(card, device int) (uint32, error)
	// DeviceIP returns the chip's RoCE IPv4 or IPv6 address, "" when unset.
	DeviceIP(card, device int) (string, error)
	// Utilization returns the AI core utilization in percent.
	Utilization(card, device int) (uint32, error)
	// Temperature returns the chip temperature in degrees Celsius.
	Temperature(card, device int) (int, error)
	// Power returns the chip's power draw in watts.
	Power(card, device int) (float64, error)
	// HBM returns the chip's high-bandwidth memory size and use.
	HBM(card, device int) (Memory, error)
	// Memory returns the chip's DDR memory size and use (310P and older
	// chips without HBM report their memory here).
	Memory(card, device int) (Memory, error)
}

// ChipInfo describes a chip as DCMI reports it.
type ChipInfo struct {
	// Type is the chip family, e.g. Ascend.
	Type string
	// Name is the chip model, e.g. 910B, 310P3.
	Name string
	// Version is the chip version string, e.g. V1.
	Version string
	// AICores is the number of AI cores.
	AICores int
}

// Memory is a memory size and its use in bytes.
type Memory struct {
	TotalBytes uint64
	UsedBytes  uint64
}

// DCMI health codes (dcmi_get_device_health).
const (
	HealthOK       uint32 = 0
	HealthMinor    uint32 = 1
	HealthMajor    uint32 = 2
	HealthCritical uint32 = 3
)

// DCMI network detection results (enum dcmi_rdfx_detect_result).
const (
	NetworkOK   uint32 = 0
	NetworkDown uint32 = 5
	NetworkInit uint32 = 6
)

// Open returns an initialised device library: sim, a simulated machine
// (pkg/ascend/simulator), when it is not nil, otherwise libdcmi.so from
// path. Shutdown releases it.
func Open(path string, sim Lib) (Lib, error) {
	lib := sim
	if sim == nil {
		var err error
		if lib, err = OpenDCMI(path); err != nil {
			return nil, err
		}
	}
	if err := lib.Init(); err != nil {
		_ = lib.Shutdown()
		return nil, fmt.Errorf("initialising DCMI: %w", err)
	}
	return lib, nil
}

// ErrNotSupported is wrapped by calls to functions the library lacks.
var ErrNotSupported = errors.New("function not exported by the DCMI library")

// ReturnError is a non-zero DCMI return code.
type ReturnError struct {
	// Func is the DCMI function, e.g. dcmi_get_device_health.
	Func string
	// Code is its return code.
	Code int
}

func (e *ReturnError) Error() string {
	return e.Func + " returned " + strconv.Itoa(e.Code)
}

// HealthyCode reports whether a DCMI health code leaves the chip usable:
// minor alarms do, major and critical faults (and unknown codes) do not.
func HealthyCode(h uint32) bool { return h == HealthOK || h == HealthMinor }

// networkHealthy reports whether a network detection result is a working
// link; a link still initialising counts as working, as in MindX.
func networkHealthy(r uint32) bool { return r == NetworkOK || r == NetworkInit }
