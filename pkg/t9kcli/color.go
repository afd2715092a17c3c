package t9kcli

import (
	"regexp"
	"strings"
)

// ANSI escapes of describe --color.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
)

// stateColors are the words describe colors: phases, condition states
// and event types.
var stateColors = map[string]string{
	"Succeeded": ansiGreen, "Running": ansiGreen, "Ready": ansiGreen, "True": ansiGreen, "Normal": ansiGreen,
	"Failed": ansiRed, "Error": ansiRed, "False": ansiRed,
	"Pending": ansiYellow, "Unknown": ansiYellow, "Warning": ansiYellow, "Suspended": ansiYellow,
}

// stateWord matches a colored word standing alone between spaces.
var stateWord = regexp.MustCompile(`(^|\s)(Succeeded|Running|Ready|True|Normal|Failed|Error|False|Pending|Unknown|Warning|Suspended)(\s|$)`)

// sectionLabel matches a top-level label such as "Phase:" or "Events:".
var sectionLabel = regexp.MustCompile(`^[A-Z][A-Za-z]*:`)

// colorize colors an aligned description: top-level labels bold, states
// by what they mean. It works on the aligned text, so the escapes take no
// room in the columns.
func colorize(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		line = stateWord.ReplaceAllStringFunc(line, func(m string) string {
			word := strings.TrimSpace(m)
			return strings.Replace(m, word, stateColors[word]+word+ansiReset, 1)
		})
		if loc := sectionLabel.FindStringIndex(line); loc != nil {
			line = ansiBold + line[:loc[1]] + ansiReset + line[loc[1]:]
		}
		lines[i] = line
	}
	return strings.Join(lines, "")
}
