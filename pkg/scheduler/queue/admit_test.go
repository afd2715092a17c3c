package queue

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

func ptr[T any](v T) *T { return &v }

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// everyone is a namespaceSelector that matches every namespace.
var everyone = &metav1.LabelSelector{}

func TestAdmit(t *testing.T) {
	teamA := namespace("team-a", map[string]string{"team": "a"})
	teamB := namespace("team-b", map[string]string{"team": "b"})
	shapes := []Shape{
		Shape(rl("cpu", "4", "memory", "16Gi")),
		Shape(rl("cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "1")),
	}

	tests := []struct {
		name     string
		queue    *schedv1beta1.Queue // nil: the queue does not exist
		w        Workload
		st       State
		want     Reason // "" means admitted
		wantRes  corev1.ResourceName
		contains []string // further substrings of the message
	}{
		{
			name: "missing queue",
			w:    Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "1")}},
			want: ReasonMissing,
		},
		{
			name:  "closed queue",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{Closed: true, NamespaceSelector: everyone}},
			w:     Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "1")}},
			want:  ReasonClosed,
		},
		{
			name:  "closed is checked before the namespace",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{Closed: true}},
			w:     Workload{Namespace: teamA},
			want:  ReasonClosed,
		},
		{
			name:     "nil namespaceSelector refuses",
			queue:    &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{}},
			w:        Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "1")}},
			want:     ReasonNamespace,
			contains: []string{"team-a"},
		},
		{
			name: "non-matching namespaceSelector refuses",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
			}},
			w:        Workload{Namespace: teamB, Pods: []corev1.ResourceList{rl("cpu", "1")}},
			want:     ReasonNamespace,
			contains: []string{"team-b"},
		},
		{
			name: "a grant admits a namespace the selector does not match",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
			}},
			w: Workload{Namespace: teamB, Pods: []corev1.ResourceList{rl("cpu", "1")}, Granted: true},
		},
		{
			name:  "a grant admits where the queue has no namespaceSelector",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{}},
			w:     Workload{Namespace: teamB, Pods: []corev1.ResourceList{rl("cpu", "1")}, Granted: true},
		},
		{
			name:  "a grant does not open a closed queue",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{Closed: true}},
			w:     Workload{Namespace: teamB, Pods: []corev1.ResourceList{rl("cpu", "1")}, Granted: true},
			want:  ReasonClosed,
		},
		{
			name: "a grant does not lift the quota",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				Quota: &schedv1beta1.Quota{Requests: rl("cpu", "1")},
			}},
			w:       Workload{Namespace: teamB, Pods: []corev1.ResourceList{rl("cpu", "2")}, Granted: true},
			want:    ReasonQuota,
			wantRes: corev1.ResourceCPU,
		},
		{
			name: "namespace without labels does not match a selector",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
			}},
			w:    Workload{Namespace: namespace("bare", nil)},
			want: ReasonNamespace,
		},
		{
			name: "matching namespaceSelector admits",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
			}},
			w: Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "1")}},
		},
		{
			name: "matchExpressions selector admits",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
				}},
			}},
			w: Workload{Namespace: teamB, Pods: []corev1.ResourceList{rl("cpu", "1")}},
		},
		{
			name:  "empty selector {} admits every namespace",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{NamespaceSelector: everyone}},
			w:     Workload{Namespace: namespace("bare", nil), Pods: []corev1.ResourceList{rl("cpu", "1")}},
		},
		{
			name: "invalid selector operator",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "team", Operator: "Bogus", Values: []string{"a"}},
				}},
			}},
			w:        Workload{Namespace: teamA},
			want:     ReasonInvalidSelector,
			contains: []string{"namespaceSelector"},
		},
		{
			name: "invalid selector: In without values",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "team", Operator: metav1.LabelSelectorOpIn},
				}},
			}},
			w:    Workload{Namespace: teamA},
			want: ReasonInvalidSelector,
		},
		{
			name: "pod fits one of several shapes",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, ResourceShapeProfile: ptr("small"),
			}},
			w:  Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "6", "memory", "8Gi", "nvidia.com/gpu", "1")}},
			st: State{Shapes: shapes},
		},
		{
			name: "every pod is checked against the shapes",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, ResourceShapeProfile: ptr("small"),
			}},
			w: Workload{Namespace: teamA, Pods: []corev1.ResourceList{
				rl("cpu", "1"), rl("cpu", "2", "memory", "64Gi"),
			}},
			st:       State{Shapes: shapes},
			want:     ReasonShape,
			wantRes:  "memory",
			contains: []string{`"small"`},
		},
		{
			name: "pod larger than every shape",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, ResourceShapeProfile: ptr("small"),
			}},
			w:        Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "16")}},
			st:       State{Shapes: shapes},
			want:     ReasonShape,
			wantRes:  "cpu",
			contains: []string{`"small"`},
		},
		{
			name: "a resource no shape names refuses",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, ResourceShapeProfile: ptr("small"),
			}},
			w:       Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "1", "huawei.com/Ascend910", "1")}},
			st:      State{Shapes: shapes},
			want:    ReasonShape,
			wantRes: "huawei.com/Ascend910",
		},
		{
			name: "unavailable profile",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, ResourceShapeProfile: ptr("small"),
			}},
			w:        Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "1")}},
			st:       State{ShapesErr: errors.New("configmap not found")},
			want:     ReasonShapeUnavailable,
			contains: []string{`"small"`, "configmap not found"},
		},
		{
			name: "empty profile name means no shapes",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, ResourceShapeProfile: ptr(""),
			}},
			w:  Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "100")}},
			st: State{ShapesErr: errors.New("ignored")},
		},
		{
			name: "shapes are checked before the quota",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, ResourceShapeProfile: ptr("small"),
				Quota: &schedv1beta1.Quota{Requests: rl("cpu", "1")},
			}},
			w:       Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "16")}},
			st:      State{Shapes: shapes},
			want:    ReasonShape,
			wantRes: "cpu",
		},
		{
			name: "seed example: quota cpu 40, 38 allocated, cpu 4 is refused",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, Quota: &schedv1beta1.Quota{Requests: rl("cpu", "40")},
			}},
			w:        Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "4", "memory", "8Gi")}},
			st:       State{Allocated: rl("cpu", "38")},
			want:     ReasonQuota,
			wantRes:  "cpu",
			contains: []string{"40", "38"},
		},
		{
			name: "seed example: quota cpu 40, 38 allocated, cpu 2 is admitted",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, Quota: &schedv1beta1.Quota{Requests: rl("cpu", "40")},
			}},
			w:  Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "2", "memory", "8Gi")}},
			st: State{Allocated: rl("cpu", "38")},
		},
		{
			name: "multi-pod workload is summed against the quota",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, Quota: &schedv1beta1.Quota{Requests: rl("cpu", "10")},
			}},
			w:       Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "4"), rl("cpu", "4"), rl("cpu", "4")}},
			want:    ReasonQuota,
			wantRes: "cpu",
		},
		{
			name: "multi-pod workload within the quota",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, Quota: &schedv1beta1.Quota{Requests: rl("cpu", "12")},
			}},
			w: Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "4"), rl("cpu", "4"), rl("cpu", "4")}},
		},
		{
			name: "nvidia.com/gpu quota: 4 replicas of 2 GPUs with 2 allocated of 8",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, Quota: &schedv1beta1.Quota{Requests: rl("cpu", "100", "nvidia.com/gpu", "8")},
			}},
			w: Workload{Namespace: teamA, Pods: []corev1.ResourceList{
				rl("cpu", "1", "nvidia.com/gpu", "2"), rl("cpu", "1", "nvidia.com/gpu", "2"),
				rl("cpu", "1", "nvidia.com/gpu", "2"), rl("cpu", "1", "nvidia.com/gpu", "2"),
			}},
			st:      State{Allocated: rl("nvidia.com/gpu", "2")},
			want:    ReasonQuota,
			wantRes: "nvidia.com/gpu",
		},
		{
			name: "mig quota within",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, Quota: &schedv1beta1.Quota{Requests: rl("nvidia.com/mig-1g.10gb", "7")},
			}},
			w:  Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("nvidia.com/mig-1g.10gb", "1"), rl("nvidia.com/mig-1g.10gb", "1")}},
			st: State{Allocated: rl("nvidia.com/mig-1g.10gb", "5")},
		},
		{
			name: "Ascend quota exceeded",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, Quota: &schedv1beta1.Quota{Requests: rl("huawei.com/Ascend910", "16")},
			}},
			w:       Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("huawei.com/Ascend910", "8"), rl("huawei.com/Ascend910", "8")}},
			st:      State{Allocated: rl("huawei.com/Ascend910", "8")},
			want:    ReasonQuota,
			wantRes: "huawei.com/Ascend910",
		},
		{
			name: "resources the quota does not name are unlimited",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, Quota: &schedv1beta1.Quota{Requests: rl("nvidia.com/gpu", "1")},
			}},
			w: Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "1000", "memory", "10Ti")}},
		},
		{
			name:  "no quota admits anything",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{NamespaceSelector: everyone}},
			w:     Workload{Namespace: teamA, Pods: []corev1.ResourceList{rl("cpu", "1000")}},
			st:    State{Allocated: rl("cpu", "1000000")},
		},
		{
			name: "workload without pods is admitted by a full queue",
			queue: &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
				NamespaceSelector: everyone, Quota: &schedv1beta1.Quota{Requests: rl("cpu", "1")},
			}},
			w:  Workload{Namespace: teamA},
			st: State{Allocated: rl("cpu", "5")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const name = "research-q"
			r := Admit(name, tt.queue, tt.w, tt.st)
			if tt.want == "" {
				if r != nil {
					t.Fatalf("Admit refused: %+v", r)
				}
				return
			}
			if r == nil {
				t.Fatalf("Admit admitted, want refusal %s", tt.want)
			}
			if r.Reason != tt.want {
				t.Errorf("Reason = %s, want %s (message %q)", r.Reason, tt.want, r.Message)
			}
			if r.Resource != tt.wantRes {
				t.Errorf("Resource = %q, want %q", r.Resource, tt.wantRes)
			}
			if r.Queue != name {
				t.Errorf("Queue = %q, want %q", r.Queue, name)
			}
			if r.Error() != r.Message {
				t.Errorf("Error() = %q, want the message %q", r.Error(), r.Message)
			}
			want := append([]string{`"` + name + `"`}, tt.contains...)
			if tt.wantRes != "" {
				want = append(want, string(tt.wantRes))
			}
			for _, s := range want {
				if !strings.Contains(r.Message, s) {
					t.Errorf("message %q does not contain %q", r.Message, s)
				}
			}
		})
	}
}

// TestAdmitSeedQuotaMessage checks the whole message of the seed's quota
// example, which users see when their notebook is refused.
func TestAdmitSeedQuotaMessage(t *testing.T) {
	q := &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
		NamespaceSelector: everyone, Quota: &schedv1beta1.Quota{Requests: rl("cpu", "40")},
	}}
	r := Admit("notebooks", q, Workload{Namespace: namespace("p", nil), Pods: []corev1.ResourceList{rl("cpu", "4")}},
		State{Allocated: rl("cpu", "38")})
	if r == nil {
		t.Fatal("admitted")
	}
	const want = `queue "notebooks": cpu requests 4 would exceed its quota 40 (38 allocated)`
	if r.Message != want {
		t.Errorf("message = %q, want %q", r.Message, want)
	}
}

// TestAdmitDoesNotModifyState: deciding must leave the allocation and the
// workload's requests as they were.
func TestAdmitDoesNotModifyState(t *testing.T) {
	q := &schedv1beta1.Queue{Spec: schedv1beta1.QueueSpec{
		NamespaceSelector: everyone, Quota: &schedv1beta1.Quota{Requests: rl("cpu", "40")},
	}}
	allocated := rl("cpu", "30")
	pods := []corev1.ResourceList{rl("cpu", "2"), rl("cpu", "3")}
	if r := Admit("q", q, Workload{Namespace: namespace("p", nil), Pods: pods}, State{Allocated: allocated}); r != nil {
		t.Fatalf("refused: %v", r)
	}
	assertResources(t, allocated, rl("cpu", "30"))
	assertResources(t, pods[0], rl("cpu", "2"))
	assertResources(t, pods[1], rl("cpu", "3"))
	assertResources(t, q.Spec.Quota.Requests, rl("cpu", "40"))
}

func TestWorkloadTotal(t *testing.T) {
	w := Workload{Pods: []corev1.ResourceList{
		rl("cpu", "1", "nvidia.com/gpu", "4"),
		rl("cpu", "1", "nvidia.com/gpu", "4"),
		rl("memory", "1Gi"),
	}}
	assertResources(t, w.Total(), rl("cpu", "2", "memory", "1Gi", "nvidia.com/gpu", "8"))
	if got := (Workload{}).Total(); len(got) != 0 {
		t.Errorf("empty workload total = %v", got)
	}
}
