// Package simcontrol is the control socket of the simulated device
// backends (pkg/nvidia/simulator, pkg/ascend/simulator): a line protocol
// through which tests and benchmarks change the simulated devices while
// the device plugin runs (--simulate-control-socket). It knows nothing of
// the commands, which belong to each simulator, and is a leaf so that the
// simulators do not link the device plugin.
package simcontrol

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"k8s.io/klog/v2"

	"github.com/accelstack/accelstack/pkg/unixsock"
)

// Server serves the control socket of a simulated device backend. The
// protocol is line based: a client writes one command per line, and the
// server answers each line, in order and on the same connection, with one
// line: "ok" when the handler accepted the command, or "error: <reason>"
// with the handler's error otherwise. A connection may carry any number of
// commands. The command syntax belongs to the simulator's handler; the
// server only splits lines.
type Server struct {
	l    net.Listener
	path string
	wg   sync.WaitGroup
}

// Serve listens on a unix socket at path that only the owner can use
// (mode 0600), replacing a stale one, and passes every line received to
// handle until Close. handle may be called from several goroutines at once.
func Serve(ctx context.Context, path string, handle func(line string) error) (*Server, error) {
	l, err := unixsock.Listen(path)
	if err != nil {
		return nil, fmt.Errorf("serving simulator control socket: %w", err)
	}
	c := &Server{l: l, path: path}
	logger := klog.FromContext(ctx)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				if !errors.Is(err, net.ErrClosed) {
					logger.Error(err, "Simulator control socket")
				}
				return
			}
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				defer conn.Close()
				c.serveConn(conn, handle)
			}()
		}
	}()
	return c, nil
}

func (c *Server) serveConn(conn net.Conn, handle func(line string) error) {
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		reply := "ok"
		if err := handle(sc.Text()); err != nil {
			reply = "error: " + err.Error()
		}
		if _, err := fmt.Fprintln(conn, reply); err != nil {
			return
		}
	}
}

// Close stops accepting, waits for open connections to end and removes
// the socket.
func (c *Server) Close() {
	c.l.Close()
	c.wg.Wait()
	_ = os.Remove(c.path)
}

// Send sends one command to the control socket at path and returns nil on
// "ok", or the reason of an "error: <reason>" answer as an error.
func Send(path, command string) error {
	conn, err := net.Dial("unix", path)
	if err != nil {
		return fmt.Errorf("dialing simulator control socket: %w", err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintln(conn, command); err != nil {
		return err
	}
	reply, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return fmt.Errorf("reading reply: %w", err)
	}
	if reply = strings.TrimSpace(reply); reply != "ok" {
		return errors.New(strings.TrimPrefix(reply, "error: "))
	}
	return nil
}
