package ranktable

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelstack/accelstack/pkg/ascend/annotation"
)

func pod(name string, ann map[string]string, lbl map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann, Labels: lbl}}
}

func conf(t *testing.T, name, server string, ids ...string) string {
	t.Helper()
	c := annotation.PodConfiguration{PodName: name, ServerID: server}
	for _, id := range ids {
		c.Devices = append(c.Devices, annotation.DeviceConfig{DeviceID: id, DeviceIP: "192.168.100." + id})
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBuild(t *testing.T) {
	w1 := pod("job-worker-1", map[string]string{annotation.ConfigurationKey: conf(t, "job-worker-1", "10.0.0.2", "2", "3"), RankIndexAnnotation: "1"}, nil)
	w0 := pod("job-worker-0", map[string]string{annotation.ConfigurationKey: conf(t, "job-worker-0", "10.0.0.1", "0", "1"), RankIndexAnnotation: "0"}, nil)
	rt, err := Build([]*corev1.Pod{w1, w0})
	if err != nil {
		t.Fatal(err)
	}
	if rt.Status != StatusCompleted || rt.ServerCount != "2" || rt.Version != "1.0" {
		t.Fatalf("table %+v", rt)
	}
	if rt.ServerList[0].ServerID != "10.0.0.1" || rt.ServerList[1].Devices[1].RankID != "3" || rt.ServerList[1].Devices[1].DeviceID != "3" {
		t.Fatalf("servers %+v", rt.ServerList)
	}

	// Without rank annotations: task index, numerically.
	v10 := pod("b", map[string]string{annotation.ConfigurationKey: conf(t, "b", "s10", "0")}, map[string]string{VolcanoTaskIndexKey: "10"})
	v2 := pod("a", map[string]string{annotation.ConfigurationKey: conf(t, "a", "s2", "0")}, map[string]string{VolcanoTaskIndexKey: "2"})
	rt, err = Build([]*corev1.Pod{v10, v2})
	if err != nil || rt.ServerList[0].ServerID != "s2" {
		t.Fatalf("table %+v, %v", rt, err)
	}

	// A T9k job's pods: by name, the rank suffix compared as a number.
	var pods []*corev1.Pod
	for _, name := range []string{"job-worker-10", "job-worker-2", "job-master-0", "job-worker-1"} {
		pods = append(pods, pod(name, map[string]string{annotation.ConfigurationKey: conf(t, name, name, "0")}, nil))
	}
	rt, err = Build(pods)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, s := range rt.ServerList {
		order = append(order, s.ServerID)
	}
	if want := []string{"job-master-0", "job-worker-1", "job-worker-2", "job-worker-10"}; !slices.Equal(order, want) {
		t.Fatalf("servers in order %v, want %v", order, want)
	}
}

func TestBuildNotReadyOrInvalid(t *testing.T) {
	ready := pod("p0", map[string]string{annotation.ConfigurationKey: conf(t, "p0", "s", "0")}, nil)
	if _, err := Build([]*corev1.Pod{ready, pod("p1", nil, nil)}); !errors.Is(err, errNotReady) {
		t.Fatalf("got %v, want not ready", err)
	}
	if _, err := Build(nil); !errors.Is(err, errNotReady) {
		t.Fatalf("no pods: got %v", err)
	}
	for name, ann := range map[string]map[string]string{
		"malformed JSON": {annotation.ConfigurationKey: "{"},
		"no devices":     {annotation.ConfigurationKey: `{"server_id":"s","devices":[]}`},
		"bad rank":       {annotation.ConfigurationKey: conf(t, "bad", "s", "0"), RankIndexAnnotation: "x"},
		"rank gap":       {annotation.ConfigurationKey: conf(t, "bad", "s", "0"), RankIndexAnnotation: "5"},
	} {
		ok := pod("p0", map[string]string{annotation.ConfigurationKey: conf(t, "p0", "s", "0"), RankIndexAnnotation: "0"}, nil)
		var invalid *InvalidPodError
		if _, err := Build([]*corev1.Pod{ok, pod("bad", ann, nil)}); !errors.As(err, &invalid) || invalid.Pod != "bad" {
			t.Errorf("%s: got %v, want an InvalidPodError for pod bad", name, err)
		}
	}
}

func TestParseStatus(t *testing.T) {
	for doc, want := range map[string]string{"": StatusInitializing, `{"status": "initializing"}`: StatusInitializing, `{"status":"completed"}`: StatusCompleted} {
		if got, err := ParseStatus(doc); err != nil || got != want {
			t.Errorf("ParseStatus(%q) = %q, %v", doc, got, err)
		}
	}
	if _, err := ParseStatus("{"); err == nil {
		t.Error("malformed document parsed")
	}
}
