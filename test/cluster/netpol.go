package cluster

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/accelstack/accelstack/test/harness"
)

// enforcer is the daemon that enforces NetworkPolicies: kube-router's
// network-policy controller alone (no routing, no service proxy), a tool
// the Makefile pins for this cluster only. It keeps pod firewall chains
// (KUBE-ROUTER-*, KUBE-POD-FW-*, KUBE-NWPLCY-*) in the filter table, which
// the bridged pod-to-pod traffic passes through
// (net.bridge.bridge-nf-call-iptables), and ipsets of the pods that
// policies select (KUBE-SRC-*, KUBE-DST-*). The node's own addresses
// (kubelet probes, the API server calling webhooks, the tests on the host)
// always reach the pods: kube-router admits traffic from a local address.
const enforcer = "kube-router"

// enforcerChain is the chain kube-router jumps to from FORWARD once its
// first sync is done.
const enforcerChain = "KUBE-ROUTER-FORWARD"

// startEnforcer starts kube-router's network-policy controller against the
// cluster's node and waits until its pod firewall is in place. The node
// must be registered: kube-router reads the node's address from it.
func (c *Cluster) startEnforcer(ctx context.Context) error {
	bin, err := harness.Tool(enforcer)
	if err != nil {
		return fmt.Errorf("the NetworkPolicy enforcer: %w", err)
	}
	if _, err := startDaemon(c.l, enforcer, bin,
		"--kubeconfig="+c.Kubeconfig(), "--hostname-override="+NodeName,
		"--run-firewall=true", "--run-router=false", "--run-service-proxy=false",
		"--service-cluster-ip-range="+ServiceCIDR,
		// No health or metrics listener: nothing reads them.
		"--health-port=0", "--metrics-port=0"); err != nil {
		return err
	}
	return c.withLog(waitFor(ctx, 60*time.Second, "kube-router's pod firewall", func(ctx context.Context) error {
		out, err := exec.CommandContext(ctx, "iptables", "-t", "filter", "-S", "FORWARD").Output()
		if err != nil {
			return fmt.Errorf("iptables -S FORWARD: %w", err)
		}
		if !strings.Contains(string(out), "-j "+enforcerChain) {
			return errors.New("FORWARD does not jump to " + enforcerChain + " yet")
		}
		return nil
	}), enforcer)
}

// Down removes what kube-router leaves behind itself (removeChains,
// removeIPSets): its --cleanup-config mode does not. In v2.1.0 it runs the
// network-policy controller's cleanup on a controller without iptables or
// ipset handlers, which removes nothing, then the service proxy's, which
// panics on a nil pointer.

// ipsets lists the names of the host's KUBE-* ipsets (kube-router's); none
// when the ipset command is missing.
func ipsets() []string {
	if _, err := exec.LookPath("ipset"); err != nil {
		return nil
	}
	out, err := exec.Command("ipset", "list", "-n").Output()
	if err != nil {
		return nil
	}
	var names []string
	for _, name := range strings.Fields(string(out)) {
		if strings.HasPrefix(name, "KUBE-") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// removeIPSets destroys the KUBE-* ipsets that did not exist before Up
// (existed). The iptables rules that match on them must be gone first.
func removeIPSets(existed map[string]bool) error {
	var errs []error
	for _, name := range ipsets() {
		if !existed[name] {
			if err := run("ipset", "destroy", name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
