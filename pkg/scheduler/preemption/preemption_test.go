package preemption

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// pod is a pod created minute minutes after t0 (larger is younger) asking cpu.
func pod(name string, minute int, cpu string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(minute) * time.Minute))},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
	}
}

func names(v []Victim) []string {
	out := make([]string, 0, len(v))
	for _, x := range v {
		out = append(out, x.Pod.Name)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func ptr[T any](v T) *T { return &v }

func TestEligible(t *testing.T) {
	tests := []struct {
		name        string
		preemptor   int32
		victim      int32
		preemptible *bool
		want        bool
	}{
		{name: "lower priority, preemptible unset", preemptor: 2, victim: 1, want: true},
		{name: "lower priority, preemptible true", preemptor: 2, victim: 1, preemptible: ptr(true), want: true},
		{name: "lower priority, preemptible false", preemptor: 2, victim: 1, preemptible: ptr(false)},
		{name: "priority 0 victim of priority 100", preemptor: 100, victim: 0, want: true},
		{name: "equal priority", preemptor: 1, victim: 1},
		{name: "equal priority 0", preemptor: 0, victim: 0},
		{name: "higher priority", preemptor: 1, victim: 2},
		{name: "higher priority, preemptible false", preemptor: 1, victim: 2, preemptible: ptr(false)},
		{name: "far lower priority, preemptible false", preemptor: 100, victim: 0, preemptible: ptr(false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Eligible(tt.preemptor, tt.victim, tt.preemptible); got != tt.want {
				t.Errorf("Eligible(%d, %d, %v) = %v, want %v", tt.preemptor, tt.victim, tt.preemptible, got, tt.want)
			}
		})
	}
}

func TestSort(t *testing.T) {
	tests := []struct {
		name string
		in   []Victim
		want []string
	}{
		{
			name: "lower queue priority first",
			in: []Victim{
				{Pod: pod("p3", 0, "1"), QueuePriority: 3},
				{Pod: pod("p1", 0, "1"), QueuePriority: 1},
				{Pod: pod("p2", 0, "1"), QueuePriority: 2},
			},
			want: []string{"p1", "p2", "p3"},
		},
		{
			name: "queue priority beats share, group priority and age",
			in: []Victim{
				{Pod: pod("high", 99, "1"), QueuePriority: 2, QueueShare: 5, GroupPriority: 0},
				{Pod: pod("low", 0, "1"), QueuePriority: 1, QueueShare: 0, GroupPriority: 100},
			},
			want: []string{"low", "high"},
		},
		{
			name: "equal queue priority: higher share first",
			in: []Victim{
				{Pod: pod("under", 0, "1"), QueuePriority: 1, QueueShare: 0.5},
				{Pod: pod("over", 0, "1"), QueuePriority: 1, QueueShare: 1.2},
				{Pod: pod("mid", 0, "1"), QueuePriority: 1, QueueShare: 0.75},
			},
			want: []string{"over", "mid", "under"},
		},
		{
			name: "share beats group priority and age",
			in: []Victim{
				{Pod: pod("young-low-share", 99, "1"), QueueShare: 0.1, GroupPriority: 0},
				{Pod: pod("old-high-share", 0, "1"), QueueShare: 0.9, GroupPriority: 100},
			},
			want: []string{"old-high-share", "young-low-share"},
		},
		{
			name: "equal share: lower group priority first",
			in: []Victim{
				{Pod: pod("g5", 99, "1"), GroupPriority: 5},
				{Pod: pod("g0", 0, "1"), GroupPriority: 0},
				{Pod: pod("g2", 50, "1"), GroupPriority: 2},
			},
			want: []string{"g0", "g2", "g5"},
		},
		{
			name: "equal group priority: youngest first",
			in: []Victim{
				{Pod: pod("old", 0, "1")},
				{Pod: pod("young", 20, "1")},
				{Pod: pod("mid", 10, "1")},
			},
			want: []string{"young", "mid", "old"},
		},
		{
			name: "same age: name tie-break",
			in: []Victim{
				{Pod: pod("a", 5, "1")},
				{Pod: pod("c", 5, "1")},
				{Pod: pod("b", 5, "1")},
			},
			want: []string{"c", "b", "a"},
		},
		{
			name: "empty",
			in:   nil,
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Sort(tt.in)
			if got := names(tt.in); !equal(got, tt.want) {
				t.Errorf("Sort = %v, want %v", got, tt.want)
			}
			// The order does not depend on the input order.
			rev := make([]Victim, len(tt.in))
			for i := range tt.in {
				rev[len(tt.in)-1-i] = tt.in[i]
			}
			Sort(rev)
			if got := names(rev); !equal(got, tt.want) {
				t.Errorf("Sort of reversed input = %v, want %v", got, tt.want)
			}
		})
	}
}

// cpuOf is the cpu a victim frees.
func cpuOf(v Victim) int64 {
	return milliCPU(queue.PodRequests(v.Pod))
}

func milliCPU(r corev1.ResourceList) int64 {
	q := r[corev1.ResourceCPU]
	return q.MilliValue()
}

// fitsFree is a fits function: the pod needs need millicpu and free are
// free before any eviction.
func fitsFree(free, need int64, calls *[][]string) func([]Victim) bool {
	return func(evicted []Victim) bool {
		if calls != nil {
			*calls = append(*calls, names(evicted))
		}
		f := free
		for _, v := range evicted {
			f += cpuOf(v)
		}
		return f >= need
	}
}

func TestPlan(t *testing.T) {
	small1 := Victim{Pod: pod("small1", 3, "10")}
	small2 := Victim{Pod: pod("small2", 2, "10")}
	big := Victim{Pod: pod("big", 1, "40")}
	huge := Victim{Pod: pod("huge", 0, "100")}
	tests := []struct {
		name   string
		sorted []Victim
		free   int64 // millicpu
		need   int64
		want   []string
		wantOK bool
	}{
		{name: "fits already: no victims", sorted: []Victim{small1, small2}, free: 50000, need: 50000, want: []string{}, wantOK: true},
		{name: "fits already with no candidates", free: 1000, need: 1000, want: []string{}, wantOK: true},
		{name: "one victim is enough", sorted: []Victim{small1, small2, big}, free: 5000, need: 15000, want: []string{"small1"}, wantOK: true},
		{name: "two in order", sorted: []Victim{small1, small2, big}, free: 0, need: 20000, want: []string{"small1", "small2"}, wantOK: true},
		{
			name:   "unneeded earlier victims are reprieved",
			sorted: []Victim{small1, small2, big},
			free:   0, need: 40000,
			want: []string{"big"}, wantOK: true,
		},
		{
			name:   "reprieve keeps the needed ones",
			sorted: []Victim{small1, small2, big},
			free:   0, need: 45000,
			want: []string{"small1", "big"}, wantOK: true,
		},
		{
			name:   "reprieve the most important first",
			sorted: []Victim{small1, small2, huge},
			free:   0, need: 100000,
			want: []string{"huge"}, wantOK: true,
		},
		{name: "not enough even evicting all", sorted: []Victim{small1, small2, big}, free: 0, need: 61000, wantOK: false},
		{name: "no candidates and no room", free: 0, need: 1, wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Plan(tt.sorted, fitsFree(tt.free, tt.need, nil))
			if ok != tt.wantOK {
				t.Fatalf("Plan ok = %v, want %v (victims %v)", ok, tt.wantOK, names(got))
			}
			if !ok {
				if got != nil {
					t.Errorf("Plan returned victims %v with false", names(got))
				}
				return
			}
			if n := names(got); !equal(n, tt.want) {
				t.Errorf("Plan = %v, want %v", n, tt.want)
			}
		})
	}
}

func TestPlanFitsNilFirst(t *testing.T) {
	var calls [][]string
	got, ok := Plan([]Victim{{Pod: pod("a", 0, "1")}}, fitsFree(1000, 1000, &calls))
	if !ok || len(got) != 0 {
		t.Fatalf("Plan = %v, %v; want no victims, true", names(got), ok)
	}
	if len(calls) == 0 || len(calls[0]) != 0 {
		t.Errorf("first fits call = %v, want one with no evictions", calls)
	}
}

func TestPlanDoesNotModifySorted(t *testing.T) {
	sorted := []Victim{{Pod: pod("s1", 3, "10")}, {Pod: pod("s2", 2, "10")}, {Pod: pod("b", 1, "40")}}
	if _, ok := Plan(sorted, fitsFree(0, 40000, nil)); !ok {
		t.Fatal("no plan")
	}
	if n := names(sorted); !equal(n, []string{"s1", "s2", "b"}) {
		t.Errorf("Plan changed its input to %v", n)
	}
}

func TestCost(t *testing.T) {
	members := map[string]int{"ns/job-a": 4, "ns/job-b": 2}
	lowest := Victim{Pod: pod("lowest", 9, "1"), QueuePriority: 0}
	mid := Victim{Pod: pod("mid", 5, "1"), QueuePriority: 1, Group: "ns/job-a"}
	mid2 := Victim{Pod: pod("mid2", 4, "1"), QueuePriority: 1, Group: "ns/job-a"}
	top := Victim{Pod: pod("top", 0, "1"), QueuePriority: 2, Group: "ns/job-b"}
	unknown := Victim{Pod: pod("unknown", 1, "1"), QueuePriority: 1, Group: "ns/gone"}

	tests := []struct {
		name     string
		plan     []Victim
		wantPods int
		wantTop  string
	}{
		{name: "empty plan", plan: nil, wantPods: 0},
		{name: "single pod without group", plan: []Victim{lowest}, wantPods: 1, wantTop: "lowest"},
		{name: "one pod of a group counts the whole group", plan: []Victim{mid}, wantPods: 4, wantTop: "mid"},
		{name: "two pods of one group count it once", plan: []Victim{mid2, mid}, wantPods: 4, wantTop: "mid2"},
		{name: "groups and loose pods", plan: []Victim{lowest, mid, mid2, top}, wantPods: 1 + 4 + 2, wantTop: "top"},
		{name: "top is the most important whatever the order", plan: []Victim{top, lowest, mid}, wantPods: 2 + 1 + 4, wantTop: "top"},
		{name: "group without a member count counts as one", plan: []Victim{unknown}, wantPods: 1, wantTop: "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, top := Cost(tt.plan, members)
			if pods != tt.wantPods {
				t.Errorf("Cost pods = %d, want %d", pods, tt.wantPods)
			}
			gotTop := ""
			if top.Pod != nil {
				gotTop = top.Pod.Name
			}
			if gotTop != tt.wantTop {
				t.Errorf("Cost top = %q, want %q", gotTop, tt.wantTop)
			}
		})
	}
}

func TestCheaper(t *testing.T) {
	low := Victim{Pod: pod("low", 0, "1"), QueuePriority: 0}
	high := Victim{Pod: pod("high", 0, "1"), QueuePriority: 3}
	tests := []struct {
		name      string
		pods      int
		top       Victim
		otherPods int
		otherTop  Victim
		want      bool
	}{
		{name: "fewer pods wins", pods: 1, top: high, otherPods: 2, otherTop: low, want: true},
		{name: "more pods loses", pods: 3, top: low, otherPods: 2, otherTop: high, want: false},
		{name: "equal pods: less important top wins", pods: 2, top: low, otherPods: 2, otherTop: high, want: true},
		{name: "equal pods: more important top loses", pods: 2, top: high, otherPods: 2, otherTop: low, want: false},
		{name: "identical costs: not cheaper", pods: 2, top: low, otherPods: 2, otherTop: low, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cheaper(tt.pods, tt.top, tt.otherPods, tt.otherTop); got != tt.want {
				t.Errorf("Cheaper = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCostPlansCompared: a plan that breaks a 4-pod gang costs more than one
// evicting two loose pods, even though it names fewer victims.
func TestCostPlansCompared(t *testing.T) {
	members := map[string]int{"ns/gang": 4}
	gangPlan := []Victim{{Pod: pod("g-0", 0, "1"), Group: "ns/gang"}}
	loosePlan := []Victim{{Pod: pod("a", 0, "1")}, {Pod: pod("b", 0, "1")}}
	gp, gt := Cost(gangPlan, members)
	lp, lt := Cost(loosePlan, members)
	if !Cheaper(lp, lt, gp, gt) || Cheaper(gp, gt, lp, lt) {
		t.Errorf("loose plan (%d pods) should be cheaper than gang plan (%d pods)", lp, gp)
	}
}

// TestSpecWorkedExample reproduces the worked example of §2.3 on one node
// of 300 cpu.
func TestSpecWorkedExample(t *testing.T) {
	type queueSpec struct {
		priority int32
		quota    corev1.ResourceList
		pods     []*corev1.Pod
	}
	cpu := func(s string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s)}
	}
	queues := map[string]*schedv1beta1.Queue{}
	running := map[string][]*corev1.Pod{}
	for name, q := range map[string]queueSpec{
		"A": {1, cpu("200"), []*corev1.Pod{pod("A1", 0, "50"), pod("A2", 1, "50"), pod("A3", 2, "50")}},
		"B": {1, cpu("100"), []*corev1.Pod{pod("B1", 0, "50")}},
		"C": {2, cpu("50"), []*corev1.Pod{pod("C1", 0, "50")}},
		"D": {2, cpu("200"), []*corev1.Pod{pod("D1", 0, "50")}},
	} {
		queues[name] = &schedv1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       schedv1beta1.QueueSpec{Priority: q.priority, Quota: &schedv1beta1.Quota{Requests: q.quota}},
		}
		running[name] = q.pods
	}
	allocated := func(q string) corev1.ResourceList {
		var sum corev1.ResourceList
		for _, p := range running[q] {
			sum = queue.Add(sum, queue.PodRequests(p))
		}
		return sum
	}
	const capacity = 300000 // millicpu
	used := int64(0)
	for q := range running {
		used += milliCPU(allocated(q))
	}
	free := capacity - used
	if free != 0 {
		t.Fatalf("free cpu = %dm, want 0", free)
	}

	// victims are the running pods a pod of queue preemptor may evict, sorted.
	victims := func(preemptor string) []Victim {
		var out []Victim
		for name, pods := range running {
			q := queues[name]
			if !Eligible(queues[preemptor].Spec.Priority, q.Spec.Priority, q.Spec.Preemptible) {
				continue
			}
			share := queue.DominantShare(allocated(name), q.Spec.Quota.Requests)
			for _, p := range pods {
				out = append(out, Victim{Pod: p, QueuePriority: q.Spec.Priority, QueueShare: share})
			}
		}
		Sort(out)
		return out
	}
	// schedule returns the victims of a new pod of queue q, "" and ok, or
	// why it is blocked.
	schedule := func(q string, p *corev1.Pod) (victimNames []string, blocked string) {
		req := queue.PodRequests(p)
		if _, over := queue.Over(queues[q].Spec.Quota.Requests, allocated(q), req); over {
			return nil, "quota"
		}
		plan, ok := Plan(victims(q), fitsFree(free, milliCPU(req), nil))
		if !ok {
			return nil, "no victims"
		}
		return names(plan), ""
	}

	t.Run("B2 is blocked: A and B have the same priority", func(t *testing.T) {
		if v := victims("B"); len(v) != 0 {
			t.Errorf("eligible victims of B = %v, want none", names(v))
		}
		if v, blocked := schedule("B", pod("B2", 10, "50")); blocked != "no victims" {
			t.Errorf("B2: victims %v, blocked %q; want blocked for lack of victims", v, blocked)
		}
	})
	t.Run("C2 is blocked: over C's quota", func(t *testing.T) {
		res, over := queue.Over(queues["C"].Spec.Quota.Requests, allocated("C"), cpu("50"))
		if !over || res != corev1.ResourceCPU {
			t.Errorf("Over(C) = %q, %v; want cpu, true", res, over)
		}
		if v, blocked := schedule("C", pod("C2", 10, "50")); blocked != "quota" {
			t.Errorf("C2: victims %v, blocked %q; want blocked by quota", v, blocked)
		}
	})
	t.Run("D2 evicts A3", func(t *testing.T) {
		if got := names(victims("D")); !equal(got, []string{"A3", "A2", "A1", "B1"}) {
			t.Errorf("victims of D in order = %v, want [A3 A2 A1 B1]", got)
		}
		shareA := queue.DominantShare(allocated("A"), queues["A"].Spec.Quota.Requests)
		shareB := queue.DominantShare(allocated("B"), queues["B"].Spec.Quota.Requests)
		if shareA != 0.75 || shareB != 0.5 {
			t.Errorf("shares A = %v, B = %v; want 0.75, 0.5", shareA, shareB)
		}
		v, blocked := schedule("D", pod("D2", 10, "50"))
		if blocked != "" || !equal(v, []string{"A3"}) {
			t.Errorf("D2: victims %v, blocked %q; want exactly [A3]", v, blocked)
		}
	})
	t.Run("C's pods are not victims of D: equal priority", func(t *testing.T) {
		for _, v := range victims("D") {
			if v.QueuePriority >= 2 {
				t.Errorf("victim %s of a priority-%d queue", v.Pod.Name, v.QueuePriority)
			}
		}
	})
	t.Run("preemptible: false protects A", func(t *testing.T) {
		queues["A"].Spec.Preemptible = ptr(false)
		defer func() { queues["A"].Spec.Preemptible = nil }()
		v, blocked := schedule("D", pod("D2", 10, "50"))
		if blocked != "" || !equal(v, []string{"B1"}) {
			t.Errorf("D2 with A not preemptible: victims %v, blocked %q; want [B1]", v, blocked)
		}
	})
}
