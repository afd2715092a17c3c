// Package serverconfig is the contract between the EventListener and
// WorkflowTrigger controller and the two servers it runs
// (cmd/workflow-events, package pkg/eventlistener/server): the port, the
// health paths, the environment the controller configures the servers
// with, the trigger's TriggerConfig, the source of a listener's events
// and the labels of the runs a trigger creates. It imports no CloudEvents
// and no server code, so that the controllers link neither.
package serverconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/webroute"
)

// Port is where both servers listen in their pods.
const Port = 8080

// SourcePrefix starts the source of a listener's events,
// /t9k/workflow/triggers/<namespace>/<listener>: the path an ingress serves
// the listener at.
const SourcePrefix = webroute.EventListenerPrefix

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
func Source(namespace, name string) string { return webroute.EventListenerPath(namespace, name) }

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

// The rate of runs a trigger pod creates when its config sets none: a run a
// second on average, 10 at once. An event over it is answered 429, which
// the listener retries later.
const (
	DefaultTriggerRate  = 1.0
	DefaultTriggerBurst = 10
)

// TriggerConfig is what the controller tells a trigger server of its
// WorkflowTrigger, as JSON in EnvTriggerConfig.
type TriggerConfig struct {
	// Namespace and Name are the WorkflowTrigger's; runs are created in
	// Namespace.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// EventSources are the trigger's listeners and filters.
	EventSources []triggersv1beta1.EventSource `json:"eventSources"`
	// UID is the WorkflowTrigger's: its runs are owned by it and labelled
	// with it (WorkflowTriggerUIDLabelKey). Empty creates runs without an
	// owner.
	UID types.UID `json:"uid,omitempty"`
	// WorkflowRunSpec is the spec of the runs.
	WorkflowRunSpec batchv1beta1.WorkflowRunSpec `json:"workflowRunSpec"`
	// MaxLiveRuns bounds the trigger's runs that have not finished; 0 is
	// triggersv1beta1.DefaultMaxLiveRuns.
	MaxLiveRuns int32 `json:"maxLiveRuns,omitempty"`
	// Rate and Burst make the token bucket of the runs a trigger pod
	// creates: Rate a second, at most Burst at once; 0 is
	// DefaultTriggerRate and DefaultTriggerBurst.
	Rate  float64 `json:"rate,omitempty"`
	Burst int     `json:"burst,omitempty"`
}

// ParseTriggerConfig decodes the JSON of a TriggerConfig, refusing unknown
// fields.
func ParseTriggerConfig(s string) (TriggerConfig, error) {
	var cfg TriggerConfig
	d := json.NewDecoder(strings.NewReader(s))
	d.DisallowUnknownFields()
	if err := d.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("decoding the trigger config: %w", err)
	}
	return cfg, cfg.Validate()
}

// Validate returns an error when the config names no trigger or listener.
func (c TriggerConfig) Validate() error {
	if c.Namespace == "" || c.Name == "" {
		return errors.New("the trigger's namespace and name are required")
	}
	if len(c.EventSources) == 0 {
		return errors.New("the trigger has no event source")
	}
	return nil
}
