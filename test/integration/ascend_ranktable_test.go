package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/ascend/annotation"
	"github.com/accelstack/accelstack/pkg/ranktable"
	"github.com/accelstack/accelstack/test/harness"
)

// ringPod is a pod of the Volcano Job job, as the seed submits it.
func ringPod(ns, job string, index int) *corev1.Pod {
	name := job + "-default-test-" + string(rune('0'+index))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{
			ranktable.RingControllerLabel: "ascend-910b",
			ranktable.VolcanoJobNameLabel: job,
			ranktable.VolcanoTaskIndexKey: string(rune('0' + index)),
		}},
		Spec: corev1.PodSpec{
			SchedulerName: "volcano",
			Containers:    []corev1.Container{{Name: "mindspore", Image: "ms-arm:b120"}},
		},
	}
}

// allocate writes the annotation the device plugin writes in Volcano mode.
func allocate(ctx context.Context, t *testing.T, c client.Client, pod *corev1.Pod, value string) {
	t.Helper()
	patch := client.MergeFrom(pod.DeepCopy())
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[annotation.ConfigurationKey] = value
	if err := c.Patch(ctx, pod, patch); err != nil {
		t.Fatalf("annotating pod %s: %v", pod.Name, err)
	}
}

func podConfiguration(t *testing.T, pod, server string, ids ...string) string {
	t.Helper()
	c := annotation.PodConfiguration{PodName: pod, ServerID: server}
	for _, id := range ids {
		c.Devices = append(c.Devices, annotation.DeviceConfig{DeviceID: id, DeviceIP: server + "." + id})
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func rankTable(ctx context.Context, t *testing.T, c client.Client, ns, job string) ranktable.RankTable {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ranktable.ConfigMapPrefix + job}, cm); err != nil {
		t.Fatalf("getting the rank table: %v", err)
	}
	var rt ranktable.RankTable
	if err := json.Unmarshal([]byte(cm.Data[ranktable.ConfigMapKey]), &rt); err != nil {
		t.Fatalf("parsing %q: %v", cm.Data[ranktable.ConfigMapKey], err)
	}
	return rt
}

// TestAscendRankTable follows the seed's Volcano Job: the submitter creates
// rings-config-<job> (initializing) and the job; the table stays
// initializing until every pod is allocated, then is completed in rank
// order and left alone afterwards. A malformed annotation gives an event on
// its pod and leaves the table initializing.
func TestAscendRankTable(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	cp.StartControllers(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := cp.Client
	const ns, job = "vcjob", "mindx-dls-test"
	harness.CreateNamespace(ctx, t, c, ns)

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ranktable.ConfigMapPrefix + job, Namespace: ns, Labels: map[string]string{ranktable.RingControllerLabel: "ascend-910b"}},
		Data:       map[string]string{ranktable.ConfigMapKey: `{"status": "initializing"}`},
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	pods := make([]*corev1.Pod, 3)
	for i := range pods {
		pods[i] = ringPod(ns, job, i)
		if err := c.Create(ctx, pods[i]); err != nil {
			t.Fatal(err)
		}
	}
	// Allocated out of rank order; the last one first.
	allocate(ctx, t, c, pods[2], podConfiguration(t, pods[2].Name, "10.0.0.3", "0", "1"))
	allocate(ctx, t, c, pods[0], podConfiguration(t, pods[0].Name, "10.0.0.1", "4", "5"))
	// The malformed annotation: an event, the table untouched.
	allocate(ctx, t, c, pods[1], `{"server_id": "10.0.0.2", "devices": [`)
	waitEvent(ctx, t, c, ns, pods[1].Name, ranktable.ReasonInvalidConfiguration)
	if rt := rankTable(ctx, t, c, ns, job); rt.Status != ranktable.StatusInitializing || len(rt.ServerList) != 0 {
		t.Fatalf("rank table written before every pod was allocated: %+v", rt)
	}

	allocate(ctx, t, c, pods[1], podConfiguration(t, pods[1].Name, "10.0.0.2", "2", "3"))
	var rt ranktable.RankTable
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		rt = rankTable(ctx, t, c, ns, job)
		return rt.Status == ranktable.StatusCompleted, nil
	})
	if err != nil {
		t.Fatalf("rank table never completed: %+v: %v", rt, err)
	}
	want := ranktable.RankTable{Status: "completed", ServerCount: "3", Version: "1.0", ServerList: []ranktable.Server{
		{ServerID: "10.0.0.1", Devices: []ranktable.Device{{DeviceID: "4", DeviceIP: "10.0.0.1.4", RankID: "0"}, {DeviceID: "5", DeviceIP: "10.0.0.1.5", RankID: "1"}}},
		{ServerID: "10.0.0.2", Devices: []ranktable.Device{{DeviceID: "2", DeviceIP: "10.0.0.2.2", RankID: "2"}, {DeviceID: "3", DeviceIP: "10.0.0.2.3", RankID: "3"}}},
		{ServerID: "10.0.0.3", Devices: []ranktable.Device{{DeviceID: "0", DeviceIP: "10.0.0.3.0", RankID: "4"}, {DeviceID: "1", DeviceIP: "10.0.0.3.1", RankID: "5"}}},
	}}
	gotJSON, _ := json.Marshal(rt)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Fatalf("rank table\n got %s\nwant %s", gotJSON, wantJSON)
	}

	// A completed table is never overwritten. The controller handles the
	// pod events in order on one worker: once a second job, allocated
	// after the change, has its table, the change has been handled.
	allocate(ctx, t, c, pods[0], podConfiguration(t, pods[0].Name, "10.0.0.9", "7"))
	const later = "later-job"
	if err := c.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ranktable.ConfigMapPrefix + later, Namespace: ns, Labels: map[string]string{ranktable.RingControllerLabel: "ascend-910b"}},
		Data:       map[string]string{ranktable.ConfigMapKey: `{"status": "initializing"}`},
	}); err != nil {
		t.Fatal(err)
	}
	laterPod := ringPod(ns, later, 0)
	if err := c.Create(ctx, laterPod); err != nil {
		t.Fatal(err)
	}
	allocate(ctx, t, c, laterPod, podConfiguration(t, laterPod.Name, "10.0.0.5", "0"))
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		return rankTable(ctx, t, c, ns, later).Status == ranktable.StatusCompleted, nil
	}); err != nil {
		t.Fatalf("rank table of %s never completed: %v", later, err)
	}
	if got, _ := json.Marshal(rankTable(ctx, t, c, ns, job)); string(got) != string(wantJSON) {
		t.Fatalf("completed rank table overwritten: %s", got)
	}
}

// TestAscendRankTableOwner takes the job name from the pods' controlling
// owner (an AscendJob) and reads an unlabelled ConfigMap created after the
// pods were allocated.
func TestAscendRankTableOwner(t *testing.T) {
	t.Parallel()
	cp := harness.StartControlPlane(t)
	cp.StartControllers(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := cp.Client
	const ns, job = "default", "default-test-pytorch"
	for i, role := range []string{"master", "worker"} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: job + "-" + role + "-0", Namespace: ns,
				Labels:      map[string]string{ranktable.RingControllerLabel: "ascend-910b"},
				Annotations: map[string]string{ranktable.RankIndexAnnotation: string(rune('0' + i))},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "mindxdl.gitee.com/v1", Kind: "AscendJob", Name: job,
					UID: "6a4c1c31-0000-0000-0000-000000000001", Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ascend", Image: "pt-arm:b120"}}},
		}
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		allocate(ctx, t, c, p, podConfiguration(t, p.Name, "node-"+role, "0"))
	}
	if err := c.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ranktable.ConfigMapPrefix + job, Namespace: ns},
		Data:       map[string]string{ranktable.ConfigMapKey: `{"status": "initializing"}`},
	}); err != nil {
		t.Fatal(err)
	}
	// The ConfigMap is not in the controller's cache; the next pod event
	// makes it look it up.
	var p corev1.Pod
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: job + "-master-0"}, &p); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(p.DeepCopy())
	p.Labels["touched"] = "true"
	if err := c.Patch(ctx, &p, patch); err != nil {
		t.Fatal(err)
	}
	var rt ranktable.RankTable
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		rt = rankTable(ctx, t, c, ns, job)
		return rt.Status == ranktable.StatusCompleted, nil
	})
	if err != nil {
		t.Fatalf("rank table never completed: %+v: %v", rt, err)
	}
	if len(rt.ServerList) != 2 || rt.ServerList[0].ServerID != "node-master" || rt.ServerList[1].Devices[0].RankID != "1" {
		t.Fatalf("rank table %+v", rt)
	}
}

func waitEvent(ctx context.Context, t *testing.T, c client.Client, ns, pod, reason string) {
	t.Helper()
	var last []string
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var list eventsv1.EventList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		last = last[:0]
		for _, e := range list.Items {
			last = append(last, e.Regarding.Name+"/"+e.Reason+": "+e.Note)
			if e.Regarding.Name == pod && e.Reason == reason && strings.Contains(e.Note, "annotation") {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %s event for pod %s; events %q: %v", reason, pod, last, err)
	}
}
