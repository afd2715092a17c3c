// Package cstring reads the fixed-size C char arrays that device libraries
// fill in (NVML's PCI bus ID, DCMI's chip names). It is separate so that
// the NVIDIA and the Ascend device models share one conversion, whichever
// signedness their C char has.
package cstring

// String returns the text of a C char array up to its first NUL byte, or
// all of it when the array is not terminated.
func String[C ~int8 | ~uint8](b []C) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}
