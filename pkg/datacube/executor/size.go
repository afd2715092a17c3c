package executor

import (
	"fmt"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes ParseSize accepts, longest first.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10},
	{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1},
}

// ParseSize parses a byte size such as 67108864, 64Mi, 64MiB or 64M (binary
// units in every form).
func ParseSize(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q: want a number of bytes with an optional Ki, Mi or Gi suffix", s)
	}
	return n * mult, nil
}

// SizeFlag is a flag.Value of a byte size parsed with ParseSize.
type SizeFlag struct{ P *int64 }

// String returns the size in bytes.
func (f SizeFlag) String() string {
	if f.P == nil {
		return "0"
	}
	return strconv.FormatInt(*f.P, 10)
}

// Set parses s.
func (f SizeFlag) Set(s string) error {
	n, err := ParseSize(s)
	if err != nil {
		return err
	}
	*f.P = n
	return nil
}
