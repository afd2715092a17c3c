package project

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// psLabels returns the Pod Security labels of level, with extra.
func psLabels(level string, extra map[string]string) map[string]string {
	l := map[string]string{
		"pod-security.kubernetes.io/enforce": level, "pod-security.kubernetes.io/enforce-version": "latest",
		"pod-security.kubernetes.io/warn": level, "pod-security.kubernetes.io/warn-version": "latest",
		"pod-security.kubernetes.io/audit": level, "pod-security.kubernetes.io/audit-version": "latest",
	}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

func TestApplyPodSecurity(t *testing.T) {
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		level       tensorstackv1beta1.PodSecurityLevel
		want        map[string]string
		wantChanged bool
		wantKept    []string
	}{
		{
			name: "a namespace without labels", level: "baseline",
			want: psLabels("baseline", nil), wantChanged: true,
		},
		{
			name: "the level changes", level: "restricted",
			labels: psLabels("baseline", nil), annotations: map[string]string{PodSecurityAnnotationKey: "baseline"},
			want: psLabels("restricted", nil), wantChanged: true,
		},
		{
			name: "nothing to do", level: "baseline",
			labels: psLabels("baseline", nil), annotations: map[string]string{PodSecurityAnnotationKey: "baseline"},
			want: psLabels("baseline", nil),
		},
		{
			// An administrator set enforce to privileged by hand: kept.
			name: "a label set by hand", level: "restricted",
			labels:      psLabels("baseline", map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}),
			annotations: map[string]string{PodSecurityAnnotationKey: "baseline"},
			want:        psLabels("restricted", map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}),
			wantChanged: true, wantKept: []string{"pod-security.kubernetes.io/enforce=privileged"},
		},
		{
			// A namespace labelled before the controller set any: its labels
			// are the administrator's.
			name: "labels there before the controller", level: "baseline",
			labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged", "pod-security.kubernetes.io/enforce-version": "v1.30"},
			want: psLabels("baseline", map[string]string{
				"pod-security.kubernetes.io/enforce": "privileged", "pod-security.kubernetes.io/enforce-version": "v1.30",
			}),
			wantChanged: true,
			wantKept:    []string{"pod-security.kubernetes.io/enforce-version=v1.30", "pod-security.kubernetes.io/enforce=privileged"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo", Labels: tc.labels, Annotations: tc.annotations}}
			changed, kept := applyPodSecurity(ns, tc.level)
			if diff := cmp.Diff(tc.want, ns.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if changed != tc.wantChanged || !cmp.Equal(tc.wantKept, kept) {
				t.Errorf("changed %v kept %q, want %v %q", changed, kept, tc.wantChanged, tc.wantKept)
			}
			if got := ns.Annotations[PodSecurityAnnotationKey]; got != string(tc.level) {
				t.Errorf("annotation %q, want %q", got, tc.level)
			}
		})
	}
}

func TestPodSecurityLevel(t *testing.T) {
	qp := &tensorstackv1beta1.QuotaProfile{PodSecurity: "restricted"}
	own := makeProject("demo")
	own.Spec.PodSecurity = "privileged"
	for _, tc := range []struct {
		name string
		p    *tensorstackv1beta1.Project
		qp   *tensorstackv1beta1.QuotaProfile
		want tensorstackv1beta1.PodSecurityLevel
	}{
		{"default", makeProject("demo"), nil, "baseline"},
		{"profile's", makeProject("demo"), qp, "restricted"},
		{"profile without one", makeProject("demo"), &tensorstackv1beta1.QuotaProfile{}, "baseline"},
		{"project's over the profile's", own, qp, "privileged"},
	} {
		if got := podSecurityLevel(tc.p, tc.qp); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestReconcilePodSecurity(t *testing.T) {
	p := makeProject("demo")
	p.Spec.QuotaProfile = "strict"
	qp := &tensorstackv1beta1.QuotaProfile{ObjectMeta: metav1.ObjectMeta{Name: "strict"}, PodSecurity: "restricted"}
	e := newFakeEnv(t, nil, p, qp)
	e.reconcile(t, "demo")
	ns := &corev1.Namespace{}
	if !e.get(t, "", "demo", ns) {
		t.Fatal("no namespace")
	}
	if diff := cmp.Diff(psLabels("restricted", map[string]string{ProjectLabelKey: "demo"}), ns.Labels); diff != "" {
		t.Errorf("labels of a new namespace (-want +got):\n%s", diff)
	}

	// The Project sets its own level; an administrator meanwhile set warn by
	// hand, which stays.
	ns.Labels["pod-security.kubernetes.io/warn"] = "privileged"
	if err := e.c.Update(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	cur := &tensorstackv1beta1.Project{}
	e.get(t, "", "demo", cur)
	cur.Spec.PodSecurity = "baseline"
	if err := e.c.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	e.reconcile(t, "demo")
	e.get(t, "", "demo", ns)
	want := psLabels("baseline", map[string]string{ProjectLabelKey: "demo", "pod-security.kubernetes.io/warn": "privileged"})
	if diff := cmp.Diff(want, ns.Labels); diff != "" {
		t.Errorf("labels after the change (-want +got):\n%s", diff)
	}
	if c := e.ready(t, "demo"); c.Status != corev1.ConditionTrue {
		t.Errorf("Ready %+v", c)
	}
	found := false
	for _, ev := range e.events() {
		found = found || (strings.Contains(ev, ReasonPodSecurityKept) && strings.Contains(ev, "pod-security.kubernetes.io/warn=privileged"))
	}
	if !found {
		t.Errorf("events %q, want %s naming the label kept", e.events(), ReasonPodSecurityKept)
	}
}
