// Package server holds the two servers of cmd/workflow-events.
//
// The listener (Listener) is the HTTP server of an EventListener: it takes
// JSON POSTs, rate limited and of bounded size, turns each into a
// CloudEvent whose data is the request's document ({"header": ...,
// "body": ...}, see package filter), replies "success" and delivers the
// event to its subscribers, the WorkflowTriggers that listen to it, with
// the CloudEvents HTTP binding (binary mode), a short timeout and a few
// retries, in the background.
//
// The trigger (Trigger) is the CloudEvents receiver of a WorkflowTrigger:
// for an event from one of its listeners whose filters all pass it creates
// a WorkflowRun named <listener>-<trigger>-<5 hex digits> from the
// trigger's workflowRunSpec, with $(body.<path>) and $(header.<name>) in
// param values substituted, as the pod's service account.
//
// Neither evaluates anything of a request: values are compared with
// filters and copied into params as strings. Neither logs a request's
// body or headers.
//
// What the controller configures them with (port, environment, the
// trigger's TriggerConfig, the labels of the runs) is package
// serverconfig.
package server
