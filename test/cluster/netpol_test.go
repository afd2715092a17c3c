package cluster

import (
	"slices"
	"testing"
)

// TestSplitRule checks that a rule of iptables -S splits into the
// arguments that delete it, quoted comments included.
func TestSplitRule(t *testing.T) {
	tests := []struct {
		line, target string
		want         []string
	}{
		{`-A FORWARD -m comment --comment "kube-router netpol - TEMCG2JMHZYE7H7T" -j KUBE-ROUTER-FORWARD`, "KUBE-ROUTER-FORWARD",
			[]string{"-A", "FORWARD", "-m", "comment", "--comment", "kube-router netpol - TEMCG2JMHZYE7H7T", "-j", "KUBE-ROUTER-FORWARD"}},
		{`-A KUBE-POD-FW-X -d 10.244.0.5/32 -m comment --comment "a \"quoted\" word" -g KUBE-NWPLCY-Y`, "KUBE-NWPLCY-Y",
			[]string{"-A", "KUBE-POD-FW-X", "-d", "10.244.0.5/32", "-m", "comment", "--comment", `a "quoted" word`, "-g", "KUBE-NWPLCY-Y"}},
		{`-N KUBE-ROUTER-INPUT`, "", []string{"-N", "KUBE-ROUTER-INPUT"}},
		{`-A INPUT  -p tcp   -j ACCEPT`, "ACCEPT", []string{"-A", "INPUT", "-p", "tcp", "-j", "ACCEPT"}},
		{``, "", nil},
	}
	for _, tt := range tests {
		got := splitRule(tt.line)
		if !slices.Equal(got, tt.want) {
			t.Errorf("splitRule(%q) = %q, want %q", tt.line, got, tt.want)
		}
		if target := ruleTarget(got); target != tt.target {
			t.Errorf("ruleTarget of %q = %q, want %q", tt.line, target, tt.target)
		}
	}
}
