package sequencer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// DefaultPollInterval is how often a waiting step looks for its
// predecessor's state.
const DefaultPollInterval = 100 * time.Millisecond

// forwarded are the signals a step passes on to its command.
var forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// The states of a step, the suffixes of its files in the state directory.
const (
	stateOK      = "ok"
	stateFailed  = "failed"
	stateSkipped = "skipped"
)

// Config is one step for Run.
type Config struct {
	// Step is the index of the step, from 0.
	Step int
	// Steps is the number of steps of the pod.
	Steps int
	// Script is the file of the step's script; empty when Command is the
	// command.
	Script string
	// Command is the command and its args, or the args of Script.
	Command []string
	// Results are the names of the declared results, in order.
	Results []string
	// ToolsDir is the tools directory; empty means ToolsDir.
	ToolsDir string
	// ResultsDir is the results directory; empty means ResultsDir.
	ResultsDir string
	// TerminationMessagePath is the step's termination message file; empty
	// means TerminationMessagePath.
	TerminationMessagePath string
	// PollInterval is how often a waiting step looks at the state; zero
	// means DefaultPollInterval.
	PollInterval time.Duration
	// Log receives the messages of workflow-tools itself; nil means
	// os.Stderr. The command writes to os.Stdout and os.Stderr.
	Log io.Writer
}

// Run runs the step cfg describes, as workflow-tools run does, and returns
// the exit code of workflow-tools: the command's, or one of the Exit codes
// of this package. It handles the forwarded signals until it returns.
func Run(cfg Config) int {
	r := &runner{Config: cfg}
	if r.ToolsDir == "" {
		r.ToolsDir = ToolsDir
	}
	if r.ResultsDir == "" {
		r.ResultsDir = ResultsDir
	}
	if r.TerminationMessagePath == "" {
		r.TerminationMessagePath = TerminationMessagePath
	}
	if r.PollInterval <= 0 {
		r.PollInterval = DefaultPollInterval
	}
	if r.Log == nil {
		r.Log = os.Stderr
	}
	if err := r.validate(); err != nil {
		r.logf("%v", err)
		return ExitToolError
	}

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)

	if r.Step > 0 {
		if code, run := r.wait(sigs); !run {
			return code
		}
	}
	return r.finish(r.runCommand(sigs))
}

// runner runs one step.
type runner struct {
	Config
}

func (r *runner) validate() error {
	switch {
	case r.Steps < 1:
		return fmt.Errorf("--steps is %d, want at least 1", r.Steps)
	case r.Step < 0 || r.Step >= r.Steps:
		return fmt.Errorf("--step is %d, want 0 to %d", r.Step, r.Steps-1)
	case r.Script == "" && len(r.Command) == 0:
		return errors.New("no command after --, and no --script")
	}
	return nil
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.Log, "workflow-tools: step %d: "+format+"\n", append([]any{r.Step}, args...)...)
}

// statePath returns the path of step i's state file.
func (r *runner) statePath(i int, state string) string {
	return filepath.Join(r.ToolsDir, StateDir, strconv.Itoa(i)+"."+state)
}

// mark records the state of the step, with the exit code in the file.
func (r *runner) mark(state string, code int) error {
	return writeFileAtomic(r.statePath(r.Step, state), []byte(strconv.Itoa(code)+"\n"), 0o644)
}

// wait waits until the previous step has succeeded. When an earlier step
// has failed or been skipped, or a signal comes first, the step is
// skipped: run is false and code is what to exit with.
func (r *runner) wait(sigs <-chan os.Signal) (code int, run bool) {
	ticker := time.NewTicker(r.PollInterval)
	defer ticker.Stop()
	for first := true; ; first = false {
		for j := range r.Step {
			if exists(r.statePath(j, stateFailed)) || exists(r.statePath(j, stateSkipped)) {
				r.logf("skipped: step %d did not succeed", j)
				r.markSkipped()
				return ExitSkipped, false
			}
		}
		if exists(r.statePath(r.Step-1, stateOK)) {
			return 0, true
		}
		if first {
			// Says why a step shows no output for a while.
			r.logf("waiting for step %d", r.Step-1)
		}
		select {
		case <-ticker.C:
		case sig := <-sigs:
			r.logf("skipped: %v while waiting for step %d", sig, r.Step-1)
			r.markSkipped()
			return 128 + signalNumber(sig), false
		}
	}
}

func (r *runner) markSkipped() {
	if err := r.mark(stateSkipped, ExitSkipped); err != nil {
		r.logf("recording the skip: %v", err)
	}
}

// runCommand runs the command, forwarding signals, and returns its exit
// code.
func (r *runner) runCommand(sigs <-chan os.Signal) int {
	argv := r.Command
	if r.Script != "" {
		argv = append([]string{r.Script}, r.Command...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return r.startFailed(err)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case sig := <-sigs:
				_ = cmd.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	// As PID 1 of its container the step also reaps the orphans of the
	// command, which would otherwise stay zombies until the pod ends.
	ws, err := waitFor(cmd.Process.Pid, os.Getpid() == 1)
	if err != nil {
		r.logf("waiting for the command: %v", err)
		return ExitToolError
	}
	switch {
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		return 128 + int(ws.Signal())
	}
	return ExitToolError
}

// startFailed reports why the command did not start and returns the
// shell's code for it.
func (r *runner) startFailed(err error) int {
	code := ExitCannotExecute
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		code = ExitNotFound
	}
	if r.Script != "" && code == ExitNotFound && exists(r.Script) {
		if interp := interpreter(r.Script); interp != "" {
			r.logf("running the script: its interpreter %s is not in the image (a script without a #! line runs under /bin/bash): %v", interp, err)
			return code
		}
	}
	r.logf("running the command: %v", err)
	return code
}

// interpreter returns the program of a script's "#!" line.
func interpreter(script string) string {
	f, err := os.Open(script)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	rest, ok := bytes.CutPrefix([]byte(line), []byte("#!"))
	if !ok {
		return ""
	}
	fields := bytes.Fields(rest)
	if len(fields) == 0 {
		return ""
	}
	return string(fields[0])
}

// waitFor waits until the process pid ends; with reapAll it reaps every
// child that ends meanwhile.
func waitFor(pid int, reapAll bool) (syscall.WaitStatus, error) {
	which := pid
	if reapAll {
		which = -1
	}
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(which, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if got == pid {
			return ws, nil
		}
	}
}

// finish records how the command ended and returns the step's exit code:
// the last step, and a step that failed, write the results into the
// termination message first.
func (r *runner) finish(code int) int {
	if code == 0 && r.Step < r.Steps-1 {
		if err := r.mark(stateOK, 0); err != nil {
			r.logf("recording the success: %v", err)
			code = ExitToolError
			_ = r.mark(stateFailed, code)
		}
		return code
	}
	msg, err := r.resultsMessage()
	if err != nil {
		r.logf("%v", err)
		msg = ErrorMessage(err)
		if code == 0 {
			code = ExitResultsError
		}
	}
	if err := os.WriteFile(r.TerminationMessagePath, []byte(msg), 0o644); err != nil {
		r.logf("writing the results to the termination message: %v", err)
		if code == 0 {
			code = ExitToolError
		}
	}
	state := stateOK
	if code != 0 {
		state = stateFailed
	}
	if err := r.mark(state, code); err != nil {
		r.logf("recording the state: %v", err)
		if code == 0 {
			code = ExitToolError
		}
	}
	if code != 0 {
		r.logf("failed with exit code %d", code)
	}
	return code
}

// resultsMessage reads the declared results and encodes them.
func (r *runner) resultsMessage() (string, error) {
	results := make([]Result, 0, len(r.Results))
	for _, name := range r.Results {
		v, err := readResult(filepath.Join(r.ResultsDir, name))
		if err != nil {
			return "", fmt.Errorf("result %s: %w", name, err)
		}
		results = append(results, Result{Name: name, Value: v})
	}
	return EncodeResults(results)
}

// readResult returns the content of a result file, "" when there is none;
// a file over MaxMessageBytes is an error.
func readResult(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxMessageBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxMessageBytes {
		size := fmt.Sprintf("more than %d", MaxMessageBytes)
		if fi, err := f.Stat(); err == nil {
			size = strconv.FormatInt(fi.Size(), 10)
		}
		return "", fmt.Errorf("%s bytes, over the %d bytes of a termination message that hold all results", size, MaxMessageBytes)
	}
	return string(b), nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func signalNumber(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return 0
}
