package ascend

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
// plugin over a unix socket with one-line commands, each answered "ok" or
// "error: <reason>":
//
//	health <phyID> <code> [<errorcode>...]   set the DCMI health code
//	network <phyID> <result>                 set the network detection result
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
	if len(f) < 3 {
		return fmt.Errorf("want 'health <phyID> <code> [codes...]' or 'network <phyID> <result>', got %q", line)
	}
	var nums []uint32
	phy, err := strconv.Atoi(f[1])
	if err != nil {
		return fmt.Errorf("bad physical ID %q", f[1])
	}
	for _, s := range f[2:] {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return fmt.Errorf("bad number %q", s)
		}
		nums = append(nums, uint32(n))
	}
	switch f[0] {
	case "health":
		return sim.SetHealth(phy, nums[0], nums[1:]...)
	case "network":
		return sim.SetNetworkHealth(phy, nums[0])
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
