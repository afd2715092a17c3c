package volcano

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/accelstack/accelstack/pkg/ascend"
	"github.com/accelstack/accelstack/pkg/nodeclient/nodeclienttest"
)

const (
	testNode     = "npu-0"
	testResource = "huawei.com/Ascend910"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// podOpt changes a test pod.
type podOpt func(*corev1.Pod)

// testPod is a pending pod on testNode that Volcano placed for chips,
// created at t0+age seconds.
func testPod(name, chips string, age int, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name),
			CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Second)),
			Annotations:       map[string]string{testResource: chips}},
		Spec: corev1.PodSpec{NodeName: testNode, SchedulerName: "volcano", Containers: []corev1.Container{{
			Name: "c", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				testResource: resource.MustParse(strconv.Itoa(len(strings.Split(chips, ","))))}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func withAnnotation(k, v string) podOpt { return func(p *corev1.Pod) { p.Annotations[k] = v } }
func withPhase(ph corev1.PodPhase) podOpt {
	return func(p *corev1.Pod) { p.Status.Phase = ph }
}
func withScheduler(s string) podOpt { return func(p *corev1.Pod) { p.Spec.SchedulerName = s } }
func withoutLimits() podOpt {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Resources = corev1.ResourceRequirements{} }
}

// resolveIDs maps Ascend910-<n> to a chip with physical ID n.
func resolveIDs(ids []string) ([]ascend.Chip, error) {
	var out []ascend.Chip
	for _, id := range ids {
		n, err := strconv.Atoi(strings.TrimPrefix(id, "Ascend910-"))
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "unknown chip %q", id)
		}
		out = append(out, ascend.Chip{PhyID: n, Info: ascend.ChipInfo{Name: "910B"}})
	}
	return out, nil
}

// startPicker runs a picker of testNode over a fake API server holding pods.
func startPicker(t *testing.T, pods ...*corev1.Pod) (*Picker, *fake.Clientset) {
	t.Helper()
	cs := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode}})
	for _, p := range pods {
		if _, err := cs.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := New(Options{NodeName: testNode, Client: nodeclienttest.Typed{C: cs.CoreV1()}, Wait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p, cs
}

func chipIDs(chips []ascend.Chip) []string {
	var out []string
	for _, c := range chips {
		out = append(out, c.ID())
	}
	return out
}

func annotationsOf(t *testing.T, cs *fake.Clientset, name string) map[string]string {
	t.Helper()
	p, err := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Annotations
}

// TestPickChipsIgnoresForgedAnnotations: a tenant's pod that names a chip
// another pod holds, claims to be first (predicate-time 0) or was not
// placed by Volcano never gets chips; the pod Volcano placed does.
func TestPickChipsIgnoresForgedAnnotations(t *testing.T) {
	p, cs := startPicker(t,
		testPod("holder", "Ascend910-0", 0, withPhase(corev1.PodRunning), withAnnotation(AnnotationRealKey, "Ascend910-0")),
		testPod("attacker", "Ascend910-0", 1, withAnnotation(AnnotationPredicateTimeKey, "0")),
		testPod("no-limits", "Ascend910-6", -10, withAnnotation(AnnotationPredicateTimeKey, "0"), withoutLimits()),
		testPod("other-scheduler", "Ascend910-7", -10, withScheduler("default-scheduler")),
		testPod("worker", "Ascend910-5", 2, withAnnotation(AnnotationPredicateTimeKey, "1000")),
	)
	ctx := context.Background()
	chips, err := p.PickChips(ctx, testResource, []string{"Ascend910-3"}, resolveIDs)
	if err != nil {
		t.Fatalf("PickChips: %v", err)
	}
	if diff := cmp.Diff([]string{"Ascend910-5"}, chipIDs(chips)); diff != "" {
		t.Errorf("chips (-want +got):\n%s", diff)
	}
	if got := annotationsOf(t, cs, "worker")[AnnotationRealKey]; got != "Ascend910-5" {
		t.Errorf("worker %s = %q, want Ascend910-5", AnnotationRealKey, got)
	}
	// With the worker served, only forged pods are left: none is served.
	_, err = p.PickChips(ctx, testResource, []string{"Ascend910-4"}, resolveIDs)
	if status.Code(err) != codes.NotFound {
		t.Fatalf("second PickChips = %v, want NotFound", err)
	}
	for _, name := range []string{"attacker", "no-limits", "other-scheduler"} {
		if got, ok := annotationsOf(t, cs, name)[AnnotationRealKey]; ok {
			t.Errorf("%s got chips %q", name, got)
		}
	}
	// Once the holder has terminated, its chip is free again.
	holder, err := cs.CoreV1().Pods("default").Get(ctx, "holder", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder.Status.Phase = corev1.PodSucceeded
	if _, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, holder, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []ascend.Chip
	for i := 0; i < 100; i++ { // until the cache shows the holder done
		if got, err = p.PickChips(ctx, testResource, []string{"Ascend910-4"}, resolveIDs); status.Code(err) != codes.NotFound {
			break
		}
	}
	if err != nil {
		t.Fatalf("PickChips after the holder ended: %v", err)
	}
	if diff := cmp.Diff([]string{"Ascend910-0"}, chipIDs(got)); diff != "" {
		t.Errorf("chips (-want +got):\n%s", diff)
	}
}

// TestPickChipsRefusesChipJustGiven: a chip given moments ago counts as in
// use before the cache shows its AscendReal annotation.
func TestPickChipsRefusesChipJustGiven(t *testing.T) {
	p, cs := startPicker(t,
		testPod("first", "Ascend910-1", 0),
		testPod("second", "Ascend910-1", 1),
	)
	ctx := context.Background()
	if _, err := p.PickChips(ctx, testResource, []string{"Ascend910-0"}, resolveIDs); err != nil {
		t.Fatalf("PickChips: %v", err)
	}
	if _, err := p.PickChips(ctx, testResource, []string{"Ascend910-0"}, resolveIDs); status.Code(err) != codes.NotFound {
		t.Fatalf("second PickChips = %v, want NotFound", err)
	}
	if got, ok := annotationsOf(t, cs, "second")[AnnotationRealKey]; ok {
		t.Errorf("second pod got chip %q already given", got)
	}
}

func TestOlder(t *testing.T) {
	tests := []struct {
		name string
		a, b *corev1.Pod
		want bool
	}{
		{"created earlier wins over predicate-time", testPod("a", "Ascend910-0", 0, withAnnotation(AnnotationPredicateTimeKey, "9")),
			testPod("b", "Ascend910-0", 1, withAnnotation(AnnotationPredicateTimeKey, "0")), true},
		{"predicate-time breaks a tie", testPod("b", "Ascend910-0", 0, withAnnotation(AnnotationPredicateTimeKey, "1")),
			testPod("a", "Ascend910-0", 0, withAnnotation(AnnotationPredicateTimeKey, "2")), true},
		{"a predicate-time beats none", testPod("b", "Ascend910-0", 0, withAnnotation(AnnotationPredicateTimeKey, "5")),
			testPod("a", "Ascend910-0", 0), true},
		{"then the name", testPod("a", "Ascend910-0", 0), testPod("b", "Ascend910-0", 0), true},
		{"not older than itself", testPod("a", "Ascend910-0", 0), testPod("a", "Ascend910-0", 0), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := older(tc.a, tc.b); got != tc.want {
				t.Errorf("older = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTakenForgottenOnDelete: a pod deleted before the cache shows its
// write-back does not stay in the served set.
func TestTakenForgottenOnDelete(t *testing.T) {
	p, cs := startPicker(t, testPod("gone", "Ascend910-2", 0))
	ctx := context.Background()
	if _, err := p.PickChips(ctx, testResource, []string{"Ascend910-0"}, resolveIDs); err != nil {
		t.Fatalf("PickChips: %v", err)
	}
	if err := cs.CoreV1().Pods("default").Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	v := p.v
	deadline := time.Now().Add(30 * time.Second)
	for {
		v.mu.Lock()
		n := len(v.taken)
		v.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d served pods still recorded after the pod was deleted", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// slowPatch answers PatchPod only after delay, as a busy API server does,
// and fails if the caller's context ends first.
type slowPatch struct {
	nodeclienttest.Typed
	delay time.Duration
}

func (s slowPatch) PatchPod(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) error {
	select {
	case <-time.After(s.delay):
		return s.Typed.PatchPod(ctx, namespace, name, pt, data)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestPickChipsSlowWriteBack: a patch answered after the wait for the pod
// has run out still gives the pod its chips; the wait bounds finding the
// pod, not writing to it.
func TestPickChipsSlowWriteBack(t *testing.T) {
	cs := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: testNode}},
		testPod("worker", "Ascend910-2", 0, withAnnotation(AnnotationPredicateTimeKey, "1000")))
	wait := 100 * time.Millisecond
	p, err := New(Options{NodeName: testNode, Client: slowPatch{nodeclienttest.Typed{C: cs.CoreV1()}, 3 * wait}, Wait: wait})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	chips, err := p.PickChips(context.Background(), testResource, []string{"Ascend910-3"}, resolveIDs)
	if err != nil {
		t.Fatalf("PickChips: %v", err)
	}
	if diff := cmp.Diff([]string{"Ascend910-2"}, chipIDs(chips)); diff != "" {
		t.Errorf("chips (-want +got):\n%s", diff)
	}
	if got := annotationsOf(t, cs, "worker")[AnnotationRealKey]; got != "Ascend910-2" {
		t.Errorf("worker %s = %q, want Ascend910-2", AnnotationRealKey, got)
	}
}
