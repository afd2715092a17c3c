package simulator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
)

// simUUID derives a stable UUID body (8-4-4-4-12 hex digits, version 5
// style) from the parts naming a simulated device, so every process that
// builds the same profile sees the same devices: the device plugin and the
// node agent run side by side with one --simulate profile and must agree
// for pod attribution to line up.
func simUUID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	sum := h.Sum(nil)[:16]
	sum[6] = sum[6]&0x0f | 0x50 // version 5 (name-based)
	sum[8] = sum[8]&0x3f | 0x80 // RFC 4122 variant
	x := hex.EncodeToString(sum)
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// simGPUUUID is the UUID of GPU index of a simulated profile.
func simGPUUUID(profile string, index int) string {
	return "GPU-" + simUUID("accelstack-simulator", profile, "gpu", strconv.Itoa(index))
}

// simMIGUUID is the UUID of the j-th MIG device of GPU index.
func simMIGUUID(profile string, index, j int) string {
	return "MIG-" + simUUID("accelstack-simulator", profile, "mig", strconv.Itoa(index), strconv.Itoa(j))
}

// simSerial is the board serial number of GPU index: 13 digits, as
// NVIDIA's boards report.
func simSerial(profile string, index int) string {
	sum := sha256.Sum256([]byte("accelstack-simulator\x00" + profile + "\x00serial\x00" + strconv.Itoa(index)))
	var n uint64
	for _, b := range sum[:8] {
		n = n<<8 | uint64(b)
	}
	return fmt.Sprintf("%013d", n%10_000_000_000_000)
}
