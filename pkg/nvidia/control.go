package nvidia

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"k8s.io/klog/v2"
)

// controlServer lets tests and benchmarks drive a running simulated
// plugin over a unix socket with one-line commands:
//
//	xid <uuid|index> <xid>     inject an XID event
//	lost <uuid|index> <bool>   make NVML checks of the device fail or pass
//
// Each command is answered with "ok" or "error: <reason>".
type controlServer struct {
	l    net.Listener
	path string
	wg   sync.WaitGroup
}

func serveControl(ctx context.Context, path string, sim *Simulator) (*controlServer, error) {
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("serving simulator control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("restricting simulator control socket: %w", err)
	}
	c := &controlServer{l: l, path: path}
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
				sc := bufio.NewScanner(conn)
				for sc.Scan() {
					reply := "ok"
					if err := runCommand(sim, sc.Text()); err != nil {
						reply = "error: " + err.Error()
					}
					if _, err := fmt.Fprintln(conn, reply); err != nil {
						return
					}
				}
			}()
		}
	}()
	return c, nil
}

func (c *controlServer) close() {
	c.l.Close()
	c.wg.Wait()
	_ = os.Remove(c.path)
}

func runCommand(sim *Simulator, line string) error {
	f := strings.Fields(line)
	if len(f) != 3 {
		return fmt.Errorf("want '<xid|lost> <device> <value>', got %q", line)
	}
	switch f[0] {
	case "xid":
		x, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("bad xid %q", f[2])
		}
		return sim.InjectXID(f[1], x)
	case "lost":
		b, err := strconv.ParseBool(f[2])
		if err != nil {
			return fmt.Errorf("bad bool %q", f[2])
		}
		return sim.SetLost(f[1], b)
	}
	return fmt.Errorf("unknown command %q", f[0])
}

// Control sends one command to a simulated plugin's control socket.
func Control(path, command string) error {
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
