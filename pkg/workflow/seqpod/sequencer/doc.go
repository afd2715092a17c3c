// Package sequencer is the step sequencer of SeqPod pods, the program
// workflow-tools: it makes the containers of one pod, which all start at
// once, run their commands one after another. It uses the standard library
// only, so that workflow-tools links statically and runs in any image
// (ubuntu, python, busybox); package seqpod builds the pods that run it.
//
// # Protocol
//
// A SeqPod pod has an emptyDir at ToolsDir (/t9k/tools) and one at
// ResultsDir (/t9k/results), mounted in every step. Its first init
// container runs "workflow-tools install /t9k/tools" (Install), which
// copies the binary to /t9k/tools/workflow-tools, creates the world-writable
// state directory /t9k/tools/state (steps may run as different users), and
// writes the script of step i, given base64-encoded in the init container's
// environment variable WORKFLOW_TOOLS_SCRIPT_<i>, to /t9k/tools/scripts/<i>
// (mode 0755), with "#!/bin/bash\nset -e\n" put before a script without a
// "#!" line (ScriptFile). Base64 keeps the script out of the kubelet's
// $(VAR) expansion of environment values and arguments, which would
// otherwise turn "$$" into "$", and keeps the pod self-contained (no
// ConfigMap to create, own and delete).
//
// Step i of N runs
//
//	/t9k/tools/workflow-tools run --step i --steps N [--result NAME]... [--script /t9k/tools/scripts/i] -- COMMAND... ARGS...
//
// (Run). It waits, polling every 100ms, until /t9k/tools/state/<i-1>.ok
// exists, saying so once on stderr; step 0 does not wait. If an earlier step j has
// /t9k/tools/state/<j>.failed or <j>.skipped, it writes <i>.skipped and
// exits with ExitSkipped without running anything, so later steps skip too.
// Otherwise it runs the command (or the script with the args as its
// arguments) as its child, with stdin, stdout and stderr passed through and
// SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 forwarded; as PID 1
// of the container it also reaps the orphans the command leaves. It writes
// <i>.ok or <i>.failed (a temporary file renamed into place, holding the
// exit code) and exits with the command's exit code (128+n when a signal n
// killed it, 127 when the command was not found, 126 when it could not be
// executed).
//
// The last step, and a step whose command fails, write the pod's results
// into their termination message, at TerminationMessagePath
// (/t9k/termination/message, the terminationMessagePath the pod builder
// sets with the policy File; the seed reserves /t9k/termination for it, and
// a path of our own leaves /dev/termination-log to the user's programs).
// The message is the JSON array [{"name":...,"value":...}] of the declared
// results (--result) in their order, each the content of
// /t9k/results/<name> as it is ("" when the file was not written; invalid
// UTF-8 becomes U+FFFD). When the array takes more than MaxMessageBytes
// (4096, the kubelet's limit on a termination message) the message is
// instead an error starting with ErrorPrefix that names the results and
// their sizes, and a step that succeeded fails with ExitResultsError.
// DecodeMessage reads either.
package sequencer
