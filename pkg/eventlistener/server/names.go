package server

import (
	"strings"
)

// EventType is the type of the CloudEvents a listener sends.
const EventType = "dev.tensorstack.workflow.event"

// maxRunPrefix is the longest <listener>-<trigger> of a run's name: the
// name, with "-" and 5 hex digits, fits a label value (63 characters),
// which the pods of the run are labelled with.
const maxRunPrefix = 63 - 6

// RunName returns the name of a run the trigger creates for an event of
// the listener: <listener>-<trigger>-<suffix>, the prefix cut to keep the
// name within 63 characters.
func RunName(listener, trigger, suffix string) string {
	prefix := listener + "-" + trigger
	if len(prefix) > maxRunPrefix {
		prefix = strings.TrimRight(prefix[:maxRunPrefix], "-.")
	}
	return prefix + "-" + suffix
}
