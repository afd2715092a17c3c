package sequencer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The reserved directories of a SeqPod pod.
const (
	// ToolsDir holds workflow-tools, the scripts and the steps' state.
	ToolsDir = "/t9k/tools"
	// ResultsDir holds the results, one file per name: $(results.<name>.path).
	ResultsDir = "/t9k/results"
	// WorkspacesDir is where the workspaces are mounted by default, one
	// directory per name: $(workspaces.<name>.path).
	WorkspacesDir = "/t9k/workspaces"
	// TerminationDir holds the termination message of the steps.
	TerminationDir = "/t9k/termination"
	// TerminationMessagePath is the terminationMessagePath of every step.
	TerminationMessagePath = TerminationDir + "/message"
)

// Binary is the name of the program, in its image and in ToolsDir.
const Binary = "workflow-tools"

// The subdirectories of the tools directory.
const (
	// StateDir holds <i>.ok, <i>.failed and <i>.skipped.
	StateDir = "state"
	// ScriptsDir holds the script of step i as file <i>.
	ScriptsDir = "scripts"
)

// ScriptEnvPrefix followed by the index of a step names the environment
// variable of the install command that holds a step's script, base64-encoded.
const ScriptEnvPrefix = "WORKFLOW_TOOLS_SCRIPT_"

// DefaultScriptHeader is put before a script that has no "#!" line.
const DefaultScriptHeader = "#!/bin/bash\nset -e\n"

// The exit codes of workflow-tools run besides the command's own. They
// lie above 128+64, the codes of commands killed by a signal.
const (
	// ExitSkipped: an earlier step failed, so the step did not run.
	ExitSkipped = 201
	// ExitResultsError: the results could not be read or are over
	// MaxMessageBytes.
	ExitResultsError = 202
	// ExitToolError: workflow-tools was run wrongly or could not record
	// the step's state.
	ExitToolError = 203
	// ExitCannotExecute and ExitNotFound are the shell's codes for a
	// command that cannot be executed and one that is not found.
	ExitCannotExecute = 126
	ExitNotFound      = 127
)

// MaxMessageBytes is the most a termination message holds.
const MaxMessageBytes = 4096

// ErrorPrefix starts a termination message that carries an error instead
// of the results.
const ErrorPrefix = "workflow-tools error: "

// Result is one result in a termination message.
type Result struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ScriptPath returns the path of step i's script under toolsDir.
func ScriptPath(toolsDir string, i int) string {
	return path.Join(toolsDir, ScriptsDir, strconv.Itoa(i))
}

// ScriptFile returns the content of the file a step's script is run from:
// the script, after DefaultScriptHeader when it has no "#!" line.
func ScriptFile(script string) []byte {
	if strings.HasPrefix(script, "#!") {
		return []byte(script)
	}
	return []byte(DefaultScriptHeader + script)
}

// EncodeResults returns the termination message that carries results: their
// JSON array, without HTML escaping. It fails when that is over
// MaxMessageBytes.
func EncodeResults(results []Result) (string, error) {
	if results == nil {
		results = []Result{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(results); err != nil {
		return "", err
	}
	msg := strings.TrimSuffix(b.String(), "\n")
	if len(msg) > MaxMessageBytes {
		return "", tooLarge(results, len(msg))
	}
	return msg, nil
}

// tooLarge says that the results take size bytes as JSON and how large
// each is, in at most MaxMessageBytes.
func tooLarge(results []Result, size int) error {
	var sizes []string
	for _, r := range results {
		sizes = append(sizes, fmt.Sprintf("%s %d", r.Name, len(r.Value)))
	}
	msg := fmt.Sprintf("the results take %d bytes as JSON, over the %d bytes of a termination message; bytes per result: %s",
		size, MaxMessageBytes, strings.Join(sizes, ", "))
	return errors.New(truncate(msg, MaxMessageBytes-len(ErrorPrefix)))
}

// ErrorMessage returns the termination message that carries err instead of
// the results, cut to MaxMessageBytes.
func ErrorMessage(err error) string {
	return truncate(ErrorPrefix+err.Error(), MaxMessageBytes)
}

// truncate cuts s to at most n bytes, ending in "..." when cut, at a
// boundary of UTF-8 characters.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// DecodeMessage reads a termination message of a step: the results, or the
// error it carries instead. An empty message holds no results.
func DecodeMessage(msg string) ([]Result, error) {
	switch {
	case msg == "":
		return nil, nil
	case strings.HasPrefix(msg, ErrorPrefix):
		return nil, errors.New(strings.TrimPrefix(msg, ErrorPrefix))
	case strings.HasPrefix(msg, "["):
		var results []Result
		if err := json.Unmarshal([]byte(msg), &results); err != nil {
			return nil, fmt.Errorf("decoding the results of the termination message: %w", err)
		}
		return results, nil
	}
	short := msg
	if len(short) > 64 {
		short = short[:64] + "..."
	}
	return nil, fmt.Errorf("the termination message %q holds no results", short)
}
