package csis3

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// logTailBytes is how much of a daemon log errors quote.
const logTailBytes = 1024

// logTail returns the last logTailBytes of a daemon log with every secret
// masked. It reads only the end of the file.
func logTail(path string, secrets []string) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log)"
	}
	defer f.Close()
	longest := 0
	for _, s := range secrets {
		longest = max(longest, len(s))
	}
	// Read a secret's length more, so that a secret cut by the start of
	// the window is dropped below rather than quoted in part.
	window := int64(logTailBytes + longest)
	cut := false
	if st, err := f.Stat(); err == nil && st.Size() > window {
		if _, err := f.Seek(-window, io.SeekEnd); err != nil {
			return "(no log)"
		}
		cut = true
	}
	b, err := io.ReadAll(io.LimitReader(f, window))
	if err != nil {
		return "(no log)"
	}
	masked := make([]bool, len(b))
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for i := 0; i+len(s) <= len(b); {
			j := strings.Index(string(b[i:]), s)
			if j < 0 {
				break
			}
			for k := i + j; k < i+j+len(s); k++ {
				masked[k] = true
			}
			i += j + 1
		}
	}
	start := 0
	if cut {
		start = longest
	}
	var sb strings.Builder
	for i := start; i < len(b); i++ {
		if !masked[i] {
			sb.WriteByte(b[i])
			continue
		}
		sb.WriteString("***")
		for i+1 < len(b) && masked[i+1] {
			i++
		}
	}
	out := sb.String()
	if len(out) > logTailBytes {
		out = out[len(out)-logTailBytes:]
	}
	return strings.TrimSpace(out)
}

// storedSecrets returns the credentials that the mounters wrote into a
// volume's state dir (rclone's config, s3fs's passwd file), so that a log
// quoted while healing, when the CO sent no secrets, is masked too.
func storedSecrets(dir string) []string {
	var out []string
	if f, err := os.Open(filepath.Join(dir, "rclone.conf")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			key, value, ok := strings.Cut(sc.Text(), "=")
			key = strings.TrimSpace(key)
			if ok && (strings.Contains(key, "key") || strings.Contains(key, "secret") || strings.Contains(key, "token")) {
				value = strings.TrimSpace(value)
				if len(value) >= 2 && value[0] == '`' && value[len(value)-1] == '`' {
					value = value[1 : len(value)-1] // quoted for rclone's parser
				}
				out = append(out, value)
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile(filepath.Join(dir, "passwd-s3fs")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			out = append(out, strings.Split(strings.TrimSpace(line), ":")...)
		}
	}
	return out
}
