package t9kcli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// bashCompletion is Debian's bash-completion, which the completion
// script of t9k (cobra's) builds on, as kubectl's does.
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// terminal is a bash in a tmux session of its own, as a person's terminal.
type terminal struct {
	t       *testing.T
	session string
}

// newTerminal starts bash, without the user's startup files, in a tmux
// session 160 columns wide, with PATH beginning with dir and env set.
func newTerminal(t *testing.T, dir string, env ...string) *terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("the terminal test needs tmux (Debian's tmux): %v", err)
	}
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Fatalf("the terminal test needs Debian's bash-completion: %v", err)
	}
	term := &terminal{t: t, session: fmt.Sprintf("t9k-%d", os.Getpid())}
	// The environment goes through env(1): tmux keeps its server's PATH for
	// new sessions.
	args := []string{"new-session", "-d", "-s", term.session, "-x", "160", "-y", "50",
		"env", "PATH=" + dir + ":" + os.Getenv("PATH"), "PS1=$ "}
	args = append(append(args, env...), "bash", "--norc", "--noprofile")
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "kill-session", "-t", term.session).Run() })
	return term
}

// keys types keys into the terminal (tmux key names such as Enter and Tab
// are keys).
func (term *terminal) keys(keys ...string) {
	term.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"send-keys", "-t", term.session}, keys...)...).CombinedOutput(); err != nil {
		term.t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
}

// screen is what the terminal shows.
func (term *terminal) screen() string {
	term.t.Helper()
	out, err := exec.Command("tmux", "capture-pane", "-p", "-t", term.session).CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux capture-pane: %v\n%s", err, out)
	}
	return string(out)
}

// waitFor waits until the screen shows every part, and returns it.
func (term *terminal) waitFor(ctx context.Context, what string, parts ...string) string {
	term.t.Helper()
	var shown string
	testutil.Poll(ctx, term.t, what, func() (bool, string, error) {
		shown = term.screen()
		for _, p := range parts {
			if !strings.Contains(shown, p) {
				return false, "the screen:\n" + shown, nil
			}
		}
		return true, "", nil
	})
	return shown
}

// testTerminal drives t9k in a terminal as a person does: completion of
// commands and of object names with Tab, then the table of get.
func testTerminal(t *testing.T, kubeconfig string) {
	bin, err := harness.BuildCmd("t9k")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	term := newTerminal(t, filepath.Dir(bin), "KUBECONFIG="+kubeconfig)
	// As a user's ~/.bashrc does on Debian, with its bash-completion.
	term.keys("source "+bashCompletion+"; source <(t9k completion bash)", "Enter")
	term.keys("clear", "Enter")

	// A command is completed from its first letters: "t9k genericj" Tab.
	term.keys("t9k genericj", "Tab")
	term.waitFor(ctx, "the command completed", "t9k genericjob")
	term.keys("C-u")

	// Names come from the cluster: two jobs of demo start with "b" and "m".
	term.keys("t9k gj describe -p demo ", "Tab", "Tab")
	shown := term.waitFor(ctx, "the job names offered", "bert", "mnist")
	if strings.Contains(shown, "gpt") {
		t.Errorf("the completion offered gpt, a job of another project:\n%s", shown)
	}
	term.keys("C-u", "clear", "Enter")

	term.keys("t9k gj get -p demo", "Enter")
	shown = term.waitFor(ctx, "the table of get", "NAME", "PHASE", "bert", "mnist")
	t.Logf("the terminal:\n%s", strings.TrimRight(shown, "\n"))
}
