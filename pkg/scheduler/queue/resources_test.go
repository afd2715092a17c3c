package queue

import (
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func container(name string, requests corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: requests}}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	tests := []struct {
		name string
		spec corev1.PodSpec
		want corev1.ResourceList
	}{
		{
			name: "no containers",
			spec: corev1.PodSpec{},
			want: corev1.ResourceList{},
		},
		{
			name: "containers are summed",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				container("a", rl("cpu", "1", "memory", "1Gi", "nvidia.com/gpu", "2")),
				container("b", rl("cpu", "500m", "memory", "512Mi")),
			}},
			want: rl("cpu", "1500m", "memory", "1536Mi", "nvidia.com/gpu", "2"),
		},
		{
			name: "a larger init container sets the minimum, per resource",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					container("init1", rl("cpu", "4", "memory", "1Gi")),
					container("init2", rl("cpu", "1", "memory", "3Gi")),
				},
				Containers: []corev1.Container{
					container("a", rl("cpu", "1", "memory", "1Gi")),
					container("b", rl("cpu", "2", "memory", "1Gi")),
				},
			},
			want: rl("cpu", "4", "memory", "3Gi"),
		},
		{
			name: "smaller init containers do not add",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{container("init", rl("cpu", "100m"))},
				Containers:     []corev1.Container{container("a", rl("cpu", "2", "huawei.com/Ascend910", "8"))},
			},
			want: rl("cpu", "2", "huawei.com/Ascend910", "8"),
		},
		{
			name: "init container resource not in the containers",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{container("init", rl("ephemeral-storage", "1Gi"))},
				Containers:     []corev1.Container{container("a", rl("cpu", "1"))},
			},
			want: rl("cpu", "1", "ephemeral-storage", "1Gi"),
		},
		{
			name: "restartable (sidecar) init containers add to the containers",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1")}},
				},
				Containers: []corev1.Container{container("a", rl("cpu", "2"))},
			},
			want: rl("cpu", "3"),
		},
		{
			name: "overhead is added on top of the effective requests",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{container("init", rl("cpu", "4", "memory", "1Gi"))},
				Containers: []corev1.Container{
					container("a", rl("cpu", "1", "memory", "1Gi")),
					container("b", rl("cpu", "2", "memory", "1Gi", "nvidia.com/mig-1g.10gb", "1")),
				},
				Overhead: rl("cpu", "250m", "memory", "100Mi"),
			},
			want: rl("cpu", "4250m", "memory", "2148Mi", "nvidia.com/mig-1g.10gb", "1"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			assertResources(t, PodRequests(&corev1.Pod{Spec: spec}), tt.want)
			assertResources(t, TemplateRequests(&spec), tt.want)
		})
	}
}

func TestAdd(t *testing.T) {
	tests := []struct {
		name string
		a, b corev1.ResourceList
		want corev1.ResourceList
	}{
		{name: "nil plus nil", want: corev1.ResourceList{}},
		{name: "nil plus b", b: rl("cpu", "1"), want: rl("cpu", "1")},
		{name: "a plus nil", a: rl("cpu", "1"), want: rl("cpu", "1")},
		{
			name: "overlapping and extended resources",
			a:    rl("cpu", "1", "memory", "1Gi", "nvidia.com/gpu", "1"),
			b:    rl("cpu", "500m", "nvidia.com/gpu", "3", "nvidia.com/mig-1g.10gb", "2", "huawei.com/Ascend910", "4"),
			want: rl("cpu", "1500m", "memory", "1Gi", "nvidia.com/gpu", "4", "nvidia.com/mig-1g.10gb", "2", "huawei.com/Ascend910", "4"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var bCopy corev1.ResourceList
			if tt.b != nil {
				bCopy = tt.b.DeepCopy()
			}
			got := Add(tt.a, tt.b)
			if got == nil {
				t.Fatal("Add returned nil")
			}
			assertResources(t, got, tt.want)
			if tt.a != nil {
				// Add adds into a and returns it.
				assertResources(t, tt.a, tt.want)
			}
			if ok, diff := sameResources(tt.b, bCopy); !ok {
				t.Errorf("Add modified b: %s", diff)
			}
		})
	}
}

func TestAddAccumulates(t *testing.T) {
	var sum corev1.ResourceList
	pod := rl("cpu", "2", "nvidia.com/gpu", "1")
	for i := 0; i < 3; i++ {
		sum = Add(sum, pod)
	}
	assertResources(t, sum, rl("cpu", "6", "nvidia.com/gpu", "3"))
	assertResources(t, pod, rl("cpu", "2", "nvidia.com/gpu", "1"))
}

func TestSub(t *testing.T) {
	tests := []struct {
		name string
		a, b corev1.ResourceList
		want corev1.ResourceList
	}{
		{name: "partial", a: rl("cpu", "4", "memory", "8Gi"), b: rl("cpu", "1500m"), want: rl("cpu", "2500m", "memory", "8Gi")},
		{name: "exact drop to zero removes", a: rl("cpu", "4", "nvidia.com/gpu", "2"), b: rl("nvidia.com/gpu", "2"), want: rl("cpu", "4")},
		{name: "below zero removes", a: rl("cpu", "1", "huawei.com/Ascend910", "1"), b: rl("cpu", "3"), want: rl("huawei.com/Ascend910", "1")},
		{name: "resource not in a is ignored", a: rl("cpu", "1"), b: rl("nvidia.com/mig-1g.10gb", "1"), want: rl("cpu", "1")},
		{name: "zero amount in b keeps a", a: rl("cpu", "1"), b: rl("cpu", "0"), want: rl("cpu", "1")},
		{name: "everything removed", a: rl("cpu", "1", "memory", "1Gi"), b: rl("cpu", "1", "memory", "1Gi"), want: corev1.ResourceList{}},
		{name: "nil b", a: rl("cpu", "1"), want: rl("cpu", "1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Sub(tt.a, tt.b)
			assertResources(t, tt.a, tt.want)
		})
	}
}

func TestSubNilA(t *testing.T) {
	var a corev1.ResourceList
	Sub(a, rl("cpu", "1")) // must not panic
	if len(a) != 0 {
		t.Errorf("Sub(nil, b) = %v", a)
	}
}

func TestOver(t *testing.T) {
	tests := []struct {
		name            string
		limit, used, ad corev1.ResourceList
		wantRes         corev1.ResourceName
		wantOver        bool
	}{
		{name: "within", limit: rl("cpu", "40"), used: rl("cpu", "38"), ad: rl("cpu", "2")},
		{name: "exactly at the limit is not over", limit: rl("cpu", "40"), used: rl("cpu", "38"), ad: rl("cpu", "2000m")},
		{name: "one milli over", limit: rl("cpu", "40"), used: rl("cpu", "38"), ad: rl("cpu", "2001m"), wantRes: "cpu", wantOver: true},
		{name: "seed example: 38 of 40 plus 4", limit: rl("cpu", "40"), used: rl("cpu", "38"), ad: rl("cpu", "4"), wantRes: "cpu", wantOver: true},
		{name: "unnamed resources are unlimited", limit: rl("cpu", "1"), ad: rl("memory", "1Ti", "nvidia.com/gpu", "100")},
		{name: "nil limit is unlimited", ad: rl("cpu", "1000")},
		{name: "nil used", limit: rl("cpu", "4"), ad: rl("cpu", "5"), wantRes: "cpu", wantOver: true},
		{name: "zero add never exceeds even when used already does", limit: rl("cpu", "4"), used: rl("cpu", "10"), ad: rl("cpu", "0")},
		{name: "used over but add does not name it", limit: rl("cpu", "4", "memory", "1Gi"), used: rl("cpu", "10"), ad: rl("memory", "1Gi")},
		{name: "nvidia.com/gpu over", limit: rl("cpu", "100", "nvidia.com/gpu", "8"), used: rl("nvidia.com/gpu", "6"), ad: rl("cpu", "1", "nvidia.com/gpu", "3"), wantRes: "nvidia.com/gpu", wantOver: true},
		{name: "mig within", limit: rl("nvidia.com/mig-1g.10gb", "7"), used: rl("nvidia.com/mig-1g.10gb", "5"), ad: rl("nvidia.com/mig-1g.10gb", "2")},
		{name: "mig over", limit: rl("nvidia.com/mig-1g.10gb", "7"), used: rl("nvidia.com/mig-1g.10gb", "6"), ad: rl("nvidia.com/mig-1g.10gb", "2"), wantRes: "nvidia.com/mig-1g.10gb", wantOver: true},
		{name: "Ascend over", limit: rl("huawei.com/Ascend910", "8"), ad: rl("huawei.com/Ascend910", "16"), wantRes: "huawei.com/Ascend910", wantOver: true},
		{name: "zero limit refuses any amount", limit: rl("nvidia.com/gpu", "0"), ad: rl("nvidia.com/gpu", "1"), wantRes: "nvidia.com/gpu", wantOver: true},
		{name: "several over: the first in name order", limit: rl("memory", "1Gi", "cpu", "1", "nvidia.com/gpu", "0"), ad: rl("nvidia.com/gpu", "1", "memory", "2Gi", "cpu", "2"), wantRes: "cpu", wantOver: true},
		{name: "memory over only", limit: rl("memory", "1Gi", "cpu", "10"), used: rl("memory", "512Mi"), ad: rl("memory", "513Mi", "cpu", "2"), wantRes: "memory", wantOver: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, over := Over(tt.limit, tt.used, tt.ad)
			if res != tt.wantRes || over != tt.wantOver {
				t.Errorf("Over = (%q, %v), want (%q, %v)", res, over, tt.wantRes, tt.wantOver)
			}
		})
	}
}

func TestOverDoesNotModifyUsed(t *testing.T) {
	used := rl("cpu", "38")
	Over(rl("cpu", "40"), used, rl("cpu", "1"))
	assertResources(t, used, rl("cpu", "38"))
}

func TestDominantShare(t *testing.T) {
	tests := []struct {
		name             string
		allocated, quota corev1.ResourceList
		want             float64
	}{
		// §2.3: A {cpu 3/6, mem 5/8} = 5/8, B {cpu 3/8, mem 1/2} = 1/2.
		{name: "spec DRF example queue A", allocated: rl("cpu", "3", "memory", "5Gi"), quota: rl("cpu", "6", "memory", "8Gi"), want: 5.0 / 8},
		{name: "spec DRF example queue B", allocated: rl("cpu", "3", "memory", "4Gi"), quota: rl("cpu", "8", "memory", "8Gi"), want: 1.0 / 2},
		{name: "no quota", allocated: rl("cpu", "3"), want: 0},
		{name: "nothing allocated", quota: rl("cpu", "3"), want: 0},
		{name: "resource not in the quota is ignored", allocated: rl("cpu", "1", "nvidia.com/gpu", "8"), quota: rl("cpu", "4"), want: 0.25},
		{name: "zero quota entry is ignored", allocated: rl("cpu", "1", "nvidia.com/gpu", "1"), quota: rl("cpu", "4", "nvidia.com/gpu", "0"), want: 0.25},
		{name: "extended resource dominates", allocated: rl("cpu", "1", "nvidia.com/gpu", "3"), quota: rl("cpu", "100", "nvidia.com/gpu", "4"), want: 0.75},
		{name: "milli cpu", allocated: rl("cpu", "250m"), quota: rl("cpu", "1"), want: 0.25},
		{name: "over quota is above 1", allocated: rl("cpu", "6"), quota: rl("cpu", "4"), want: 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DominantShare(tt.allocated, tt.quota); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("DominantShare = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestDominantShareDRFOrder: of the spec's two queues, B has the lower
// dominant share and so goes first.
func TestDominantShareDRFOrder(t *testing.T) {
	a := DominantShare(rl("cpu", "3", "memory", "5Gi"), rl("cpu", "6", "memory", "8Gi"))
	b := DominantShare(rl("cpu", "3", "memory", "4Gi"), rl("cpu", "8", "memory", "8Gi"))
	if !(b < a) {
		t.Errorf("share(B) = %v, share(A) = %v; want B lower", b, a)
	}
}

// TestDominantShareLargeQuantities: shares of resources counted in large
// units (memory or storage in bytes) must not depend on whether their
// milli-value fits in an int64.
func TestDominantShareLargeQuantities(t *testing.T) {
	tests := []struct {
		allocated, quota corev1.ResourceList
		want             float64
	}{
		{allocated: rl("memory", "8Pi"), quota: rl("memory", "16Pi"), want: 0.5},
		{allocated: rl("ephemeral-storage", "1Ei"), quota: rl("ephemeral-storage", "4Ei"), want: 0.25},
	}
	for _, tt := range tests {
		if got := DominantShare(tt.allocated, tt.quota); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("DominantShare(%s, %s) = %v, want %v", show(tt.allocated), show(tt.quota), got, tt.want)
		}
	}
}

// TestTemplateRequestsLimitsOnly: a pod made from a spec that sets only
// limits gets requests equal to them (API defaulting), so that is what it
// asks of its queue; the seed's GPU examples set limits only.
func TestTemplateRequestsLimitsOnly(t *testing.T) {
	spec := corev1.PodSpec{Containers: []corev1.Container{{
		Name:      "worker",
		Resources: corev1.ResourceRequirements{Limits: rl("cpu", "2", "nvidia.com/gpu", "4")},
	}}}
	assertResources(t, TemplateRequests(&spec), rl("cpu", "2", "nvidia.com/gpu", "4"))
}
