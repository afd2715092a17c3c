package ascend

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// Layouts of the DCMI structures the binding reads (dcmi_interface_api.h).
struct as_chip_info {
	unsigned char chip_type[32];
	unsigned char chip_name[32];
	unsigned char chip_ver[32];
	unsigned int aicore_cnt;
};

struct as_hbm_info {
	unsigned long long memory_size;
	unsigned int freq;
	unsigned long long memory_usage;
	int temp;
	unsigned int bandwith_util_rate;
};

struct as_memory_info {
	unsigned long long memory_size;
	unsigned long long memory_available;
	unsigned int freq;
	unsigned long hugepagesize;
	unsigned long hugepages_total;
	unsigned long hugepages_free;
	unsigned int utiliza;
	unsigned char reserve[60];
};

struct as_ip_addr {
	union {
		unsigned char ip6[16];
		unsigned char ip4[4];
	} u_addr;
	int ip_type;
};

// Trampolines: cgo cannot call C function pointers directly.
static int as_init(void *f) { return ((int (*)(void))f)(); }
static int as_card_list(void *f, int *num, int *list, int len) {
	return ((int (*)(int *, int *, int))f)(num, list, len);
}
static int as_int_of_card(void *f, int card, int *out) {
	return ((int (*)(int, int *))f)(card, out);
}
static int as_logic_id(void *f, int *logic, int card, int dev) {
	return ((int (*)(int *, int, int))f)(logic, card, dev);
}
static int as_phy_id(void *f, unsigned int logic, unsigned int *phy) {
	return ((int (*)(unsigned int, unsigned int *))f)(logic, phy);
}
static int as_chip_info(void *f, int card, int dev, struct as_chip_info *out) {
	return ((int (*)(int, int, struct as_chip_info *))f)(card, dev, out);
}
static int as_uint_of_dev(void *f, int card, int dev, unsigned int *out) {
	return ((int (*)(int, int, unsigned int *))f)(card, dev, out);
}
static int as_int_of_dev(void *f, int card, int dev, int *out) {
	return ((int (*)(int, int, int *))f)(card, dev, out);
}
static int as_errorcodes(void *f, int card, int dev, int *count, unsigned int *list, unsigned int len) {
	return ((int (*)(int, int, int *, unsigned int *, unsigned int))f)(card, dev, count, list, len);
}
static int as_ip(void *f, int card, int dev, int port_type, int port, struct as_ip_addr *ip, struct as_ip_addr *mask) {
	return ((int (*)(int, int, int, int, struct as_ip_addr *, struct as_ip_addr *))f)(card, dev, port_type, port, ip, mask);
}
static int as_utilization(void *f, int card, int dev, int kind, unsigned int *out) {
	return ((int (*)(int, int, int, unsigned int *))f)(card, dev, kind, out);
}
static int as_hbm(void *f, int card, int dev, struct as_hbm_info *out) {
	return ((int (*)(int, int, struct as_hbm_info *))f)(card, dev, out);
}
static int as_memory(void *f, int card, int dev, struct as_memory_info *out) {
	return ((int (*)(int, int, struct as_memory_info *))f)(card, dev, out);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"unsafe"

	"github.com/accelstack/accelstack/pkg/cstring"
)

// DefaultDCMILibrary is the library name dlopen looks up by default.
const DefaultDCMILibrary = "libdcmi.so"

// The DCMI functions the binding resolves, each on its own: a library
// lacking one still loads, and only calls to that function fail.
const (
	fnInit          = "dcmi_init"
	fnCardList      = "dcmi_get_card_num_list"
	fnDeviceNum     = "dcmi_get_device_num_in_card"
	fnLogicID       = "dcmi_get_device_logic_id"
	fnPhyID         = "dcmi_get_device_phyid_from_logicid"
	fnChipInfo      = "dcmi_get_device_chip_info"
	fnHealth        = "dcmi_get_device_health"
	fnErrorCodes    = "dcmi_get_device_errorcode_v2"
	fnNetworkHealth = "dcmi_get_device_network_health"
	fnDeviceIP      = "dcmi_get_device_ip"
	fnUtilization   = "dcmi_get_device_utilization_rate"
	fnTemperature   = "dcmi_get_device_temperature"
	fnPower         = "dcmi_get_device_power_info"
	fnHBM           = "dcmi_get_device_hbm_info"
	fnMemory        = "dcmi_get_device_memory_info_v3"
)

var dcmiFunctions = []string{fnInit, fnCardList, fnDeviceNum, fnLogicID, fnPhyID, fnChipInfo, fnHealth,
	fnErrorCodes, fnNetworkHealth, fnDeviceIP, fnUtilization, fnTemperature, fnPower, fnHBM, fnMemory, fnSubscribe}

// DCMI constants the binding passes in.
const (
	maxCards          = 64
	maxErrorCodes     = 128
	dcmiRoCEPort      = 1 // enum dcmi_port_type: DCMI_ROCE_PORT
	dcmiIPv6          = 1 // enum dcmi_ip_addr_type: DCMI_IPADDR_TYPE_V6
	utilizationAICore = 2 // dcmi_get_device_utilization_rate input_type: AI core
)

// dcmiLib is the cgo binding of libdcmi.so.
type dcmiLib struct {
	path string

	mu     sync.RWMutex
	handle unsafe.Pointer
	syms   map[string]unsafe.Pointer
	events *eventPipe // fault-event subscription, once FaultEvents is called
}

var _ Lib = (*dcmiLib)(nil)

// OpenDCMI loads the DCMI library at path (a file or a name dlopen
// searches for; "" means libdcmi.so) and resolves its functions. It fails
// when the library cannot be loaded; missing functions fail only when called.
func OpenDCMI(path string) (Lib, error) {
	if path == "" {
		path = DefaultDCMILibrary
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	h := C.dlopen(cpath, C.RTLD_LAZY|C.RTLD_LOCAL)
	if h == nil {
		return nil, fmt.Errorf("loading DCMI library %s: %s: is the Ascend driver installed and the library mounted into the container?", path, C.GoString(C.dlerror()))
	}
	l := &dcmiLib{path: path, handle: h, syms: map[string]unsafe.Pointer{}}
	for _, name := range dcmiFunctions {
		cname := C.CString(name)
		if p := C.dlsym(h, cname); p != nil {
			l.syms[name] = p
		}
		C.free(unsafe.Pointer(cname))
	}
	return l, nil
}

// sym returns a resolved function; the caller holds l.mu for reading.
func (l *dcmiLib) sym(name string) (unsafe.Pointer, error) {
	if l.handle == nil {
		return nil, fmt.Errorf("%s: DCMI library %s is shut down", name, l.path)
	}
	p := l.syms[name]
	if p == nil {
		return nil, fmt.Errorf("%s in %s: %w", name, l.path, ErrNotSupported)
	}
	return p, nil
}

// call runs f with the resolved function name and maps its return code.
func (l *dcmiLib) call(name string, f func(p unsafe.Pointer) C.int) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	p, err := l.sym(name)
	if err != nil {
		return err
	}
	if rc := f(p); rc != 0 {
		return &ReturnError{Func: name, Code: int(rc)}
	}
	return nil
}

// Init calls dcmi_init.
func (l *dcmiLib) Init() error {
	return l.call(fnInit, func(p unsafe.Pointer) C.int { return C.as_init(p) })
}

// Shutdown closes the library; DCMI has no shutdown call.
func (l *dcmiLib) Shutdown() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.handle == nil {
		return nil
	}
	if l.events != nil {
		// DCMI cannot unsubscribe and its event thread runs library code:
		// detach the callback and keep the library loaded.
		l.stopEvents()
		l.handle, l.syms = nil, nil
		return nil
	}
	rc := C.dlclose(l.handle)
	l.handle, l.syms = nil, nil
	if rc != 0 {
		return errors.New("dlclose " + l.path + ": " + C.GoString(C.dlerror()))
	}
	return nil
}

// CardList calls dcmi_get_card_num_list.
func (l *dcmiLib) CardList() ([]int, error) {
	var num C.int
	var list [maxCards]C.int
	err := l.call(fnCardList, func(p unsafe.Pointer) C.int {
		return C.as_card_list(p, &num, &list[0], maxCards)
	})
	if err != nil {
		return nil, err
	}
	if num < 0 || num > maxCards {
		return nil, fmt.Errorf("%s: card count %d out of range", fnCardList, num)
	}
	out := make([]int, num)
	for i := range out {
		out[i] = int(list[i])
	}
	return out, nil
}

// DeviceNumInCard calls dcmi_get_device_num_in_card.
func (l *dcmiLib) DeviceNumInCard(card int) (int, error) {
	var n C.int
	err := l.call(fnDeviceNum, func(p unsafe.Pointer) C.int { return C.as_int_of_card(p, C.int(card), &n) })
	return int(n), err
}

// LogicID calls dcmi_get_device_logic_id.
func (l *dcmiLib) LogicID(card, device int) (int, error) {
	var id C.int
	err := l.call(fnLogicID, func(p unsafe.Pointer) C.int { return C.as_logic_id(p, &id, C.int(card), C.int(device)) })
	return int(id), err
}

// PhysicalID calls dcmi_get_device_phyid_from_logicid.
func (l *dcmiLib) PhysicalID(logicID int) (int, error) {
	var id C.uint
	err := l.call(fnPhyID, func(p unsafe.Pointer) C.int { return C.as_phy_id(p, C.uint(logicID), &id) })
	return int(id), err
}

// ChipInfo calls dcmi_get_device_chip_info.
func (l *dcmiLib) ChipInfo(card, device int) (ChipInfo, error) {
	var ci C.struct_as_chip_info
	err := l.call(fnChipInfo, func(p unsafe.Pointer) C.int { return C.as_chip_info(p, C.int(card), C.int(device), &ci) })
	if err != nil {
		return ChipInfo{}, err
	}
	return ChipInfo{
		Type:    cstring.String(ci.chip_type[:]),
		Name:    cstring.String(ci.chip_name[:]),
		Version: cstring.String(ci.chip_ver[:]),
		AICores: int(ci.aicore_cnt),
	}, nil
}

// Health calls dcmi_get_device_health.
func (l *dcmiLib) Health(card, device int) (uint32, error) {
	var h C.uint
	err := l.call(fnHealth, func(p unsafe.Pointer) C.int { return C.as_uint_of_dev(p, C.int(card), C.int(device), &h) })
	return uint32(h), err
}

// ErrorCodes calls dcmi_get_device_errorcode_v2.
func (l *dcmiLib) ErrorCodes(card, device int) ([]uint32, error) {
	var count C.int
	var list [maxErrorCodes]C.uint
	err := l.call(fnErrorCodes, func(p unsafe.Pointer) C.int {
		return C.as_errorcodes(p, C.int(card), C.int(device), &count, &list[0], maxErrorCodes)
	})
	if err != nil {
		return nil, err
	}
	if count < 0 || count > maxErrorCodes {
		return nil, fmt.Errorf("%s: error count %d out of range", fnErrorCodes, count)
	}
	out := make([]uint32, count)
	for i := range out {
		out[i] = uint32(list[i])
	}
	return out, nil
}

// NetworkHealth calls dcmi_get_device_network_health.
func (l *dcmiLib) NetworkHealth(card, device int) (uint32, error) {
	var r C.uint
	err := l.call(fnNetworkHealth, func(p unsafe.Pointer) C.int { return C.as_uint_of_dev(p, C.int(card), C.int(device), &r) })
	return uint32(r), err
}

// DeviceIP calls dcmi_get_device_ip for the chip's RoCE port.
func (l *dcmiLib) DeviceIP(card, device int) (string, error) {
	var ip, mask C.struct_as_ip_addr
	err := l.call(fnDeviceIP, func(p unsafe.Pointer) C.int {
		return C.as_ip(p, C.int(card), C.int(device), dcmiRoCEPort, 0, &ip, &mask)
	})
	if err != nil {
		return "", err
	}
	raw := C.GoBytes(unsafe.Pointer(&ip.u_addr[0]), 16)
	var addr net.IP
	if ip.ip_type == dcmiIPv6 {
		addr = net.IP(raw)
	} else {
		addr = net.IPv4(raw[0], raw[1], raw[2], raw[3])
	}
	if addr.IsUnspecified() {
		return "", nil
	}
	return addr.String(), nil
}

// Utilization calls dcmi_get_device_utilization_rate for the AI cores.
func (l *dcmiLib) Utilization(card, device int) (uint32, error) {
	var u C.uint
	err := l.call(fnUtilization, func(p unsafe.Pointer) C.int {
		return C.as_utilization(p, C.int(card), C.int(device), utilizationAICore, &u)
	})
	return uint32(u), err
}

// Temperature calls dcmi_get_device_temperature.
func (l *dcmiLib) Temperature(card, device int) (int, error) {
	var t C.int
	err := l.call(fnTemperature, func(p unsafe.Pointer) C.int { return C.as_int_of_dev(p, C.int(card), C.int(device), &t) })
	return int(t), err
}

// Power calls dcmi_get_device_power_info, which reports tenths of a watt.
func (l *dcmiLib) Power(card, device int) (float64, error) {
	var w C.int
	err := l.call(fnPower, func(p unsafe.Pointer) C.int { return C.as_int_of_dev(p, C.int(card), C.int(device), &w) })
	return float64(w) / 10, err
}

const mib = 1 << 20

// HBM calls dcmi_get_device_hbm_info, which reports MiB.
func (l *dcmiLib) HBM(card, device int) (Memory, error) {
	var h C.struct_as_hbm_info
	err := l.call(fnHBM, func(p unsafe.Pointer) C.int { return C.as_hbm(p, C.int(card), C.int(device), &h) })
	if err != nil {
		return Memory{}, err
	}
	return Memory{TotalBytes: uint64(h.memory_size) * mib, UsedBytes: uint64(h.memory_usage) * mib}, nil
}

// Memory calls dcmi_get_device_memory_info_v3, which reports MiB.
func (l *dcmiLib) Memory(card, device int) (Memory, error) {
	var m C.struct_as_memory_info
	err := l.call(fnMemory, func(p unsafe.Pointer) C.int { return C.as_memory(p, C.int(card), C.int(device), &m) })
	if err != nil {
		return Memory{}, err
	}
	total, avail := uint64(m.memory_size), uint64(m.memory_available)
	if avail > total {
		avail = total
	}
	return Memory{TotalBytes: total * mib, UsedBytes: (total - avail) * mib}, nil
}
