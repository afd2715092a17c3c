package server

import (
	"strings"
	"testing"
)

func TestRunName(t *testing.T) {
	if got := RunName("event-listener-sample", "workflow-trigger-sample", "87a0d"); got != "event-listener-sample-workflow-trigger-sample-87a0d" {
		t.Errorf("RunName = %q, want the seed's", got)
	}
	long := RunName(strings.Repeat("l", 40), strings.Repeat("t", 40), "87a0d")
	if len(long) != 63 || !strings.HasSuffix(long, "-87a0d") || !strings.HasPrefix(long, strings.Repeat("l", 40)+"-ttt") {
		t.Errorf("RunName of long names = %q (%d)", long, len(long))
	}
	// A cut at a dash or dot does not leave one before the suffix.
	cut := RunName(strings.Repeat("l", 56), "x.y", "87a0d")
	if cut != strings.Repeat("l", 56)+"-87a0d" {
		t.Errorf("RunName cut at a dash = %q", cut)
	}
}
