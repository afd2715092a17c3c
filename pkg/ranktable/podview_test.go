package ranktable

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/accelstack/accelstack/pkg/ascend/annotation"
)

// The rank-table cache keeps of a pod what the rank table is built from,
// whoever made the pod, and nothing a submitter can make large besides.
func TestPodView(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "team", Name: "job-worker-0", UID: "u", ResourceVersion: "9",
			Labels: map[string]string{RingControllerLabel: "ascend-910", VolcanoJobNameLabel: "job", VolcanoTaskIndexKey: "0"},
			Annotations: map[string]string{
				annotation.ConfigurationKey: `{"server_id":"10.0.0.1","devices":[{"device_id":"0","device_ip":"192.168.1.1"}]}`,
				RankIndexAnnotation:         "0",
				"note":                      big,
			},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "job", UID: "j", Controller: ptr.To(true)},
				{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "c"},
			},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{{Name: "BIG", Value: big}}}}},
		Status: corev1.PodStatus{Message: big},
	}
	got, err := podView(pod)
	if err != nil {
		t.Fatal(err)
	}
	view := got.(*corev1.Pod)
	want := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "team", Name: "job-worker-0", UID: "u", ResourceVersion: "9",
		Labels: pod.Labels,
		Annotations: map[string]string{
			annotation.ConfigurationKey: pod.Annotations[annotation.ConfigurationKey],
			RankIndexAnnotation:         "0",
		},
		OwnerReferences: pod.OwnerReferences[:1],
	}}
	if diff := cmp.Diff(want, view); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
	rt, err := Build([]*corev1.Pod{view})
	if err != nil || len(rt.ServerList) != 1 {
		t.Errorf("rank table of the view: %+v, %v; want one server", rt, err)
	}
	if JobName(view) != "job" {
		t.Errorf("JobName of the view = %q, want job", JobName(view))
	}
}
