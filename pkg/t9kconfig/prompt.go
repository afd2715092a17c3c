package t9kconfig

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// Prompter asks questions on the terminal, or reads the answers from a
// pipe.
type Prompter struct {
	in   *bufio.Reader
	file io.Reader
	// Out is where the questions go.
	Out io.Writer
}

// NewPrompter returns a prompter reading answers from in.
func NewPrompter(in io.Reader, out io.Writer) *Prompter {
	return &Prompter{in: bufio.NewReader(in), file: in, Out: out}
}

// Line asks for a line and returns it trimmed.
func (p *Prompter) Line(question string) (string, error) {
	_, _ = fmt.Fprint(p.Out, question)
	s, err := p.in.ReadString('\n')
	if err != nil && (!errors.Is(err, io.EOF) || s == "") {
		return "", fmt.Errorf("reading the answer to %q: %w", strings.TrimSpace(question), err)
	}
	return strings.TrimSpace(s), nil
}

// Secret asks for a secret, not echoed when the input is a terminal.
func (p *Prompter) Secret(question string) (string, error) {
	f, ok := p.file.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) { //nolint:gosec // a file descriptor fits an int
		s, err := p.Line(question)
		if err == nil && s == "" {
			err = fmt.Errorf("%s got nothing", strings.TrimSpace(question))
		}
		return s, err
	}
	_, _ = fmt.Fprint(p.Out, question)
	b, err := term.ReadPassword(int(f.Fd())) //nolint:gosec // a file descriptor fits an int
	_, _ = fmt.Fprintln(p.Out)
	if err != nil {
		return "", fmt.Errorf("reading the answer to %q: %w", strings.TrimSpace(question), err)
	}
	if len(b) == 0 {
		return "", fmt.Errorf("%s got nothing", strings.TrimSpace(question))
	}
	return string(b), nil
}
