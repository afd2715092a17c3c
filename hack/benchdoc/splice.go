package main

import (
	"fmt"
	"strings"
)

// section is the new text of one benchmark's part of the page.
type section struct {
	// name is the bench program's directory name, or goTestSection.
	name string
	// body is markdown; empty keeps the page's text.
	body string
}

// beginMarker and endMarker enclose the generated text of a section.
func beginMarker(name string) string { return "<!-- begin bench " + name + " -->" }
func endMarker(name string) string   { return "<!-- end bench " + name + " -->" }

// splice replaces the text between the markers of each section that has a
// body. A section with a body and no markers is appended at the end under a
// heading of its name, so a new bench program shows up without editing the
// page first.
func splice(page string, sections []section) (string, error) {
	for _, s := range sections {
		if strings.TrimSpace(s.body) == "" {
			continue
		}
		body := "\n" + strings.TrimSpace(s.body) + "\n"
		begin, end := beginMarker(s.name), endMarker(s.name)
		b := strings.Index(page, begin)
		if b < 0 {
			if strings.Contains(page, end) {
				return "", fmt.Errorf("%q without %q", end, begin)
			}
			page = strings.TrimRight(page, "\n") + "\n\n## " + s.name + "\n\n" + begin + body + end + "\n"
			continue
		}
		if strings.Count(page, begin) > 1 {
			return "", fmt.Errorf("%q appears more than once", begin)
		}
		e := strings.Index(page, end)
		if e < b {
			return "", fmt.Errorf("%q without %q after it", begin, end)
		}
		page = page[:b+len(begin)] + body + page[e:]
	}
	return page, nil
}
