// Command pause is the pod sandbox container of the local test cluster: it
// holds the pod's namespaces open by doing nothing. As PID 1 of the pod it
// reaps any child that gets reparented to it, and it exits 0 on SIGINT or
// SIGTERM so that the runtime can stop the sandbox without a SIGKILL.
//
// The image package builds it with CGO_ENABLED=0, so the binary is static
// and the pause image needs no shared libraries.
package main

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap collects every child that has exited. Signals coalesce, so one SIGCHLD
// may stand for several children; loop until none is left to wait for.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}
