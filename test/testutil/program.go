package testutil

import (
	"fmt"
	"os"
	"sync"
)

// T is what the harness's and the browser's helpers need of a test.
// testing.TB has it, and so has Program, for the bench programs, which run
// outside go test.
type T interface {
	Helper()
	Cleanup(func())
	TempDir() string
	Logf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Failed() bool
}

// Program is a T for a program: its logs go to standard error, Fatal
// runs the cleanups and exits 1, and Close runs the cleanups (in reverse,
// as testing does) at the program's end.
type Program struct {
	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

var _ T = (*Program)(nil)

// Helper implements T.
func (p *Program) Helper() {}

// Cleanup implements T.
func (p *Program) Cleanup(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups = append(p.cleanups, f)
}

// TempDir implements T: a new directory, removed by Close.
func (p *Program) TempDir() string {
	dir, err := os.MkdirTemp("", "accelstack-")
	if err != nil {
		p.Fatal(err)
	}
	p.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// Logf implements T.
func (p *Program) Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// Fatal implements T.
func (p *Program) Fatal(args ...any) {
	p.Fatalf("%s", fmt.Sprint(args...))
}

// Fatalf implements T.
func (p *Program) Fatalf(format string, args ...any) {
	p.mu.Lock()
	p.failed = true
	p.mu.Unlock()
	p.Logf(format, args...)
	p.Close()
	os.Exit(1)
}

// Failed implements T.
func (p *Program) Failed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// Close runs the cleanups, the last registered first.
func (p *Program) Close() {
	p.mu.Lock()
	fs := p.cleanups
	p.cleanups = nil
	p.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
