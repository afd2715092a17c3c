package reclaim

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
)

func TestBasePath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		wantErr  bool
	}{
		{in: "", want: ""},
		{in: "/", want: ""},
		{in: "/t9k/notebooks/projects/demo/name/tutorial", want: "/t9k/notebooks/projects/demo/name/tutorial"},
		{in: "t9k/notebooks/projects/demo/name/tutorial/", want: "/t9k/notebooks/projects/demo/name/tutorial"},
		{in: "/notebook/a_b.c~d", want: "/notebook/a_b.c~d"},
		{in: "/a/../../activity/report", wantErr: true},
		{in: "/a/./b", wantErr: true},
		{in: "/a//b", wantErr: true},
		{in: "/a?x=1", wantErr: true},
		{in: "/a#frag", wantErr: true},
		{in: "http://169.254.169.254/latest", wantErr: true},
		// Slashes are trimmed: a path on the pod, not a host.
		{in: "//evil.example/x", want: "/evil.example/x"},
		{in: "/@evil.example", wantErr: true},
		{in: "/a%2e%2e/b", wantErr: true},
		{in: "/a b", wantErr: true},
		{in: "/a\r\nHost: x", wantErr: true},
	} {
		got, err := basePath(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("basePath(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// setHostNetwork puts the pod ns/name on its node's network.
func (f *fixture) setHostNetwork(ns, name string) {
	f.t.Helper()
	pod := &corev1.Pod{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
		f.t.Fatal(err)
	}
	pod.Spec.HostNetwork = true
	if err := f.c.Update(f.ctx, pod); err != nil {
		f.t.Fatal(err)
	}
}

// TestKeeperHostNetworkNotProbed: a notebook pod on its node's network,
// whose IP is the node's, gets no request from the Keeper; its evidence is
// unknown and it is never suspended as idle.
func TestKeeperHostNetworkNotProbed(t *testing.T) {
	f := newFixture(t, nil, nil)
	nb, srv := f.notebook(testNS, "host", tensorstackv1beta1.NotebookJupyter, 0)
	f.setHostNetwork(testNS, "host-0")

	f.clock.Step(3 * time.Hour)
	f.probe()
	if got := srv.Requests(); len(got) != 0 {
		t.Errorf("the Keeper sent %d request(s) to a hostNetwork pod: %+v", len(got), got)
	}
	f.wantIdle(nb, corev1.ConditionUnknown, ReasonEvidenceIncomplete, "shares its node's network")
	f.clock.Step(25 * time.Hour)
	f.probe()
	f.get(nb)
	if nb.Spec.Suspend {
		t.Error("suspended without evidence")
	}
}

// TestKeeperJupyterPathRefused: a notebook whose NB_PREFIX is no plain path
// gets no Jupyter request; the sidecar decides.
func TestKeeperJupyterPathRefused(t *testing.T) {
	f := newFixture(t, nil, nil)
	nb, srv := f.notebook(testNS, "odd", tensorstackv1beta1.NotebookJupyter, 0,
		corev1.EnvVar{Name: "NB_PREFIX", Value: "/x/../../activity/report?y=1#"})

	f.clock.Step(2 * time.Hour)
	f.probe()
	for _, r := range srv.Requests() {
		if r.Path != activity.ReportPath {
			t.Errorf("the Keeper requested %s?%s from a notebook whose base path is refused", r.Path, r.RawQuery)
		}
	}
	f.wantIdle(nb, corev1.ConditionTrue, ReasonNoActivity, "Jupyter unknown", "not a plain URL path")
}
