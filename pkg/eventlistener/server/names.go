package server

import (
	"strings"
)

// Port is where both servers listen in their pods.
const Port = 8080

// EventType is the type of the CloudEvents a listener sends.
const EventType = "dev.tensorstack.workflow.event"

// SourcePrefix starts the source of a listener's events,
// /t9k/workflow/triggers/<namespace>/<listener>: the path an ingress serves
// the listener at.
const SourcePrefix = "/t9k/workflow/triggers/"

// Labels and annotations of the WorkflowRuns a trigger creates.
const (
	// WorkflowTriggerLabelKey names the trigger that created the run.
	WorkflowTriggerLabelKey = "tensorstack.dev/workflow-trigger"
	// EventListenerLabelKey names the listener the event came from.
	EventListenerLabelKey = "tensorstack.dev/event-listener"
	// WorkflowTriggerUIDLabelKey is the UID of the trigger that created the
	// run: the trigger counts its runs not finished, and the controller
	// its finished ones, by it.
	WorkflowTriggerUIDLabelKey = "tensorstack.dev/workflow-trigger-uid"
	// EventIDAnnotationKey is the ID of the CloudEvent that started the run.
	EventIDAnnotationKey = "tensorstack.dev/event-id"
)

// The environment variables the controller configures the servers with;
// each is also a flag of the subcommand.
const (
	// EnvListenerNamespace and EnvListenerName are the listener's
	// namespace and name (flags --namespace, --name of listen).
	EnvListenerNamespace = "EVENT_LISTENER_NAMESPACE"
	EnvListenerName      = "EVENT_LISTENER_NAME"
	// EnvSubscribers holds the URLs of the triggers of a listener, comma
	// separated (flag --subscribers).
	EnvSubscribers = "EVENT_LISTENER_SUBSCRIBERS"
	// EnvTriggerConfig holds a TriggerConfig as JSON (flag --config of
	// trigger).
	EnvTriggerConfig = "WORKFLOW_TRIGGER_CONFIG"
	// EnvSecretFile is the path of the file holding a listener's shared
	// secret, its Secret mounted (flag --secret-file of listen). The
	// secret itself is never in the environment or the arguments.
	EnvSecretFile = "EVENT_LISTENER_SECRET_FILE"
)

// Paths of the health endpoints of both servers.
const (
	HealthzPath = "/healthz"
	ReadyzPath  = "/readyz"
)

// Source returns the source of the events of the listener name in
// namespace.
func Source(namespace, name string) string {
	return SourcePrefix + namespace + "/" + name
}

// ParseSource returns the namespace and listener of a source that Source
// made.
func ParseSource(source string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(source, SourcePrefix)
	if !ok {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	return namespace, name, true
}

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
