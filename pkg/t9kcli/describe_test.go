package t9kcli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// now is the describer's clock in the golden tests.
var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// describeFixture is a GenericJob pending in a queue whose quota it would
// exceed, with its pods, PodGroup and events.
func describeFixture() (*unstructured.Unstructured, *fake.Clientset, func(context.Context, kind, string) (*unstructured.Unstructured, error)) {
	ago := func(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }
	job := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch.tensorstack.dev/v1beta1", "kind": "GenericJob",
		"metadata": map[string]any{"name": "mnist", "namespace": "demo", "uid": "job-uid", "creationTimestamp": ago(10 * time.Minute)},
		"spec":     map[string]any{"scheduler": map[string]any{"t9kScheduler": map[string]any{"queue": "a100"}}},
		"status": map[string]any{
			"phase": "Pending",
			"conditions": []any{
				map[string]any{"type": "Initialized", "status": "True", "reason": "PodsCreated", "lastTransitionTime": ago(9 * time.Minute)},
				map[string]any{"type": "Running", "status": "False", "reason": "Unschedulable", "message": "waiting for the queue", "lastTransitionTime": ago(9 * time.Minute)},
			},
			"tasks": []any{map[string]any{"type": "worker", "restartCount": int64(0), "replicas": []any{
				map[string]any{"name": "mnist-worker-0", "phase": "Pending"}, map[string]any{"name": "mnist-worker-1", "phase": "Pending"},
			}}},
		},
	}}
	owner := []metav1.OwnerReference{{APIVersion: "batch.tensorstack.dev/v1beta1", Kind: "GenericJob", Name: "mnist", UID: "job-uid", Controller: ptr.To(true)}}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, UID: types.UID("uid-" + name), OwnerReferences: owner, CreationTimestamp: metav1.NewTime(now.Add(-9 * time.Minute))},
			Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
				Message: `queue "a100": nvidia.com/gpu requests 8 would exceed its quota 4`,
			}}},
		}
	}
	other := pod("gpt-worker-0")
	other.OwnerReferences = nil
	cs := fake.NewClientset(pod("mnist-worker-0"), pod("mnist-worker-1"), other,
		&corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: "demo", Name: "e1"},
			InvolvedObject: corev1.ObjectReference{Kind: "GenericJob", Name: "mnist", UID: "job-uid"},
			Type:           corev1.EventTypeNormal, Reason: "PodsCreated", Message: "created 2 pods", LastTimestamp: metav1.NewTime(now.Add(-9 * time.Minute)),
		},
		&corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: "demo", Name: "e2"},
			InvolvedObject: corev1.ObjectReference{Kind: "GenericJob", Name: "other", UID: "other-uid"},
			Type:           corev1.EventTypeWarning, Reason: "Other", Message: "not this job's", LastTimestamp: metav1.NewTime(now.Add(-time.Minute)),
		})
	get := func(_ context.Context, k kind, name string) (*unstructured.Unstructured, error) {
		switch k.name {
		case "queue":
			return &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"name": name},
				"spec":     map[string]any{"closed": false, "quota": map[string]any{"requests": map[string]any{"nvidia.com/gpu": "4", "cpu": "40"}}},
				"status":   map[string]any{"allocated": map[string]any{"nvidia.com/gpu": "4"}},
			}}, nil
		case "podgroup":
			return &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"name": name},
				"status": map[string]any{"conditions": []any{map[string]any{
					"type": "Scheduled", "status": "False", "reason": "QuotaExceeded", "message": "needs 8 nvidia.com/gpu, 0 left",
				}}},
			}}, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: k.name}, name)
	}
	return job, cs, get
}

// TestDescribeGolden compares describe's output, plain and colored, with
// testdata; -update rewrites the files.
func TestDescribeGolden(t *testing.T) {
	job, cs, get := describeFixture()
	d := &describer{cs: cs, now: now, get: get}
	var text bytes.Buffer
	tw := tabwriter.NewWriter(&text, 0, 8, 2, ' ', 0)
	if err := d.describe(context.Background(), tw, kindNamed("genericjob"), job); err != nil {
		t.Fatal(err)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	plain := text.String()
	for _, golden := range []struct{ file, got string }{
		{"describe-genericjob.txt", plain},
		{"describe-genericjob-color.txt", colorize(plain)},
	} {
		path := filepath.Join("testdata", golden.file)
		if *update {
			if err := os.WriteFile(path, []byte(golden.got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if golden.got != string(want) {
			t.Errorf("%s differs; run go test ./pkg/t9kcli -run TestDescribeGolden -update and review the diff.\ngot:\n%s", path, golden.got)
		}
	}
	for _, want := range []string{"would exceed its quota 4", "nvidia.com/gpu 4/4", "QuotaExceeded", "created 2 pods", "mnist-worker-1"} {
		if !strings.Contains(plain, want) {
			t.Errorf("the description lacks %q", want)
		}
	}
	for _, unwanted := range []string{"gpt-worker-0", "not this job's"} {
		if strings.Contains(plain, unwanted) {
			t.Errorf("the description shows %q, which is not the job's", unwanted)
		}
	}
	if colorize(plain) == plain || len(stripANSI(colorize(plain))) != len(plain) {
		t.Error("colorize adds no colors, or changes the text beside them")
	}
}

// stripANSI removes the escapes colorize adds.
func stripANSI(s string) string {
	for _, e := range []string{ansiReset, ansiBold, ansiRed, ansiGreen, ansiYellow} {
		s = strings.ReplaceAll(s, e, "")
	}
	return s
}
