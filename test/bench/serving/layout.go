package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/accelstack/accelstack/test/harness"
)

// layout is a placement of the processes on the CPUs, and what was
// measured in it.
type layout struct {
	title string
	// alone names the processes (by their process name) given the last
	// CPU to themselves; every other process, this one included, runs on
	// the others. With none named, all share all CPUs.
	alone    []string
	backends []*backend
	loads    []float64
	// logged requests went through a router with the logger on; the sink
	// received events of them.
	logged, received int64
}

// pin places procs, and this process, as l says.
func (l *layout) pin(procs []*process) error {
	n := runtime.NumCPU()
	var all, last, others unix.CPUSet
	for c := range n {
		all.Set(c)
		if c == n-1 {
			last.Set(c)
		} else {
			others.Set(c)
		}
	}
	place := func(pid int, set *unix.CPUSet) error {
		if len(l.alone) == 0 {
			set = &all
		}
		return harness.SetAffinity(pid, set)
	}
	if err := place(os.Getpid(), &others); err != nil {
		return err
	}
	for _, p := range procs {
		set := &others
		if slices.Contains(l.alone, p.name) {
			set = &last
		}
		if err := place(p.cmd.Process.Pid, set); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return nil
}

// measure sends the requests of every path of backends in turn, in rounds.
func (l *layout) measure(ctx context.Context, client *http.Client, backends []*backend, sinkURL string, requests, conc, rounds int) error {
	for _, b := range backends {
		nb := &backend{title: b.title}
		for _, p := range b.paths {
			nb.paths = append(nb.paths, &path{name: p.name, url: p.url, router: p.router, model: p.model, sink: p.sink})
		}
		l.backends = append(l.backends, nb)
	}
	sinkBefore, err := drained(ctx, sinkURL)
	if err != nil {
		return err
	}
	for range rounds {
		for _, b := range l.backends {
			for _, p := range b.paths {
				l.loads = append(l.loads, harness.LoadAverage())
				cpu0, mcpu0, scpu0 := p.router.cpu(), p.model.cpu(), p.sink.cpu()
				t0 := time.Now()
				lat, err := load(ctx, client, p.url, conc, requests/rounds)
				if err != nil {
					return fmt.Errorf("%s: %s: %w", b.title, p.name, err)
				}
				p.secs += time.Since(t0).Seconds()
				p.cpu += p.router.cpu() - cpu0
				p.mcpu += p.model.cpu() - mcpu0
				p.scpu += p.sink.cpu() - scpu0
				p.lat = append(p.lat, lat...)
				if strings.HasSuffix(p.name, "logger on") {
					l.logged += int64(len(lat))
				}
			}
		}
	}
	l.loads = append(l.loads, harness.LoadAverage())
	sinkAfter, err := drained(ctx, sinkURL)
	l.received = sinkAfter - sinkBefore
	return err
}

// print writes l's tables in markdown.
func (l *layout) print() {
	fmt.Printf("**%s** (load average, 1 minute, at the turns of the paths: %.2f to %.2f):\n\n", l.title, slices.Min(l.loads), slices.Max(l.loads))
	for _, b := range l.backends {
		fmt.Printf("Behind %s:\n\n", b.title)
		fmt.Println("| path | p50 | p99 | added p99 | requests/s | ratio | router CPU per request | model server CPU per request | sink CPU per request | targets |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
		direct := b.paths[0]
		drps := float64(len(direct.lat)) / direct.secs
		for i, p := range b.paths {
			rps := float64(len(p.lat)) / p.secs
			added, cpu, scpu, met := "—", "—", "—", "—"
			if i > 0 {
				d := pct(p.lat, 99) - pct(direct.lat, 99)
				added = d.Round(time.Microsecond).String()
				cpu = (p.cpu / time.Duration(len(p.lat))).Round(time.Microsecond).String()
				met = targets(d, rps/drps)
			}
			if p.sink != nil {
				scpu = (p.scpu / time.Duration(len(p.lat))).Round(time.Microsecond).String()
			}
			mcpu := (p.mcpu / time.Duration(len(p.lat))).Round(time.Microsecond)
			fmt.Printf("| %s | %s | %s | %s | %.0f | %.2f | %s | %s | %s | %s |\n", p.name, pct(p.lat, 50), pct(p.lat, 99), added, rps, rps/drps, cpu, mcpu, scpu, met)
		}
		fmt.Println()
	}
	fmt.Printf("Logger events: the sink received %d of the %d the measured requests made; the router drops what its bounded queues cannot hold when the sink falls behind.\n\n", l.received, 2*l.logged)
}
