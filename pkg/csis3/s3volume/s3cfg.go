package s3volume

import (
	"bufio"
	"fmt"
	"strings"
)

// parseS3cfg parses s3cmd's INI configuration (the `.s3cfg` file) into its
// key/value pairs. Only the [default] section (or keys before any section)
// are read, as s3cmd does without --config-section. Comments start with '#'
// or ';'. Values are trimmed; s3cmd writes "key = value". Keys and values
// holding a control character are refused (the line splitting already
// takes out '\n'), and errors give line numbers, never contents.
func parseS3cfg(text string) (map[string]string, error) {
	values := map[string]string{}
	section := "default"
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("line %d: unterminated section header", n)
			}
			section = strings.TrimSpace(line[1 : len(line)-1])
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: want key = value", n)
		}
		key = strings.TrimSpace(key)
		if key == "" {
			return nil, fmt.Errorf("line %d: empty key", n)
		}
		value = strings.TrimSpace(value)
		if HasControl(key) || HasControl(value) {
			return nil, fmt.Errorf("line %d: control character", n)
		}
		if section == "default" {
			values[key] = value
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return values, nil
}

// parseS3cfgBool reads s3cmd's booleans: True/False, yes/no, on/off, 1/0.
func parseS3cfgBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean")
}
