package cron

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

// wakeupWait bounds waits for a wake-up that must come.
const wakeupWait = 10 * time.Second

// received returns the names woken, waiting up to d for the first.
func received(w *wakeups, d time.Duration) []string {
	var out []string
	timeout := time.After(d)
	for {
		select {
		case e := <-w.events:
			out = append(out, e.Object.GetName())
			d = 50 * time.Millisecond // drain what came with it
			timeout = time.After(d)
		case <-timeout:
			return out
		}
	}
}

func TestWakeups(t *testing.T) {
	clk := clocktesting.NewFakeClock(at("2026-03-02 10:00:00"))
	w := newWakeups(clk)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { _ = w.Start(ctx); close(stopped) }()
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}

	w.at(a, at("2026-03-02 10:01:00"))
	w.at(b, at("2026-03-02 10:02:00"))
	w.at(b, at("2026-03-02 10:03:00")) // replaces b's
	clk.SetTime(at("2026-03-02 10:00:59"))
	if got := received(w, 100*time.Millisecond); len(got) != 0 {
		t.Fatalf("woken before the time: %v", got)
	}
	clk.SetTime(at("2026-03-02 10:02:30"))
	if got := received(w, wakeupWait); len(got) != 1 || got[0] != "a" {
		t.Fatalf("woken %v, want a only (b's 10:02 was replaced by 10:03)", got)
	}
	for deadline := time.Now().Add(wakeupWait); !w.when(a).IsZero(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a still pending after its wake-up")
		}
	}
	w.cancel(b)
	clk.SetTime(at("2026-03-02 10:04:00"))
	if got := received(w, 100*time.Millisecond); len(got) != 0 {
		t.Fatalf("woken after cancel: %v", got)
	}

	// A time already past wakes at once.
	w.at(a, at("2026-03-02 10:03:00"))
	if got := received(w, wakeupWait); len(got) != 1 || got[0] != "a" {
		t.Fatalf("woken %v, want a at once", got)
	}

	// The manager's stop ends the pending waits.
	w.at(b, at("2026-03-02 11:00:00"))
	cancel()
	<-stopped
	clk.SetTime(at("2026-03-02 12:00:00"))
	if got := received(w, 100*time.Millisecond); len(got) != 0 {
		t.Fatalf("woken after stop: %v", got)
	}
	w.at(a, at("2026-03-02 11:00:00"))
	if !w.when(a).IsZero() {
		t.Error("a wake-up was armed after stop")
	}
}
