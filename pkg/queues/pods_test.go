package queues

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// The pod cache keeps what the queues compute from a pod and drops what a
// tenant can make large.
func TestSchedulingView(t *testing.T) {
	big := strings.Repeat("x", 256<<10)
	res := func(cpu, gpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), "nvidia.com/gpu": resource.MustParse(gpu),
		}}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "team", Name: "p", UID: "u", ResourceVersion: "3",
			Labels:          map[string]string{schedv1beta1.QueueLabel: "q", schedv1beta1.GroupNameLabel: "g"},
			Annotations:     map[string]string{"note": big},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "c", UID: "x", Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{
			NodeName: "n1", SchedulerName: schedv1beta1.SchedulerName,
			Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			InitContainers: []corev1.Container{
				{Name: "init", Resources: res("4", "0"), Command: []string{big}},
				{Name: "sidecar", Resources: res("1", "0"), RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
			},
			Containers: []corev1.Container{{Name: "main", Resources: res("2", "1"), Env: []corev1.EnvVar{{Name: "BIG", Value: big}}}},
			Volumes:    []corev1.Volume{{Name: "v"}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Message: big},
	}
	got, err := schedulingView(pod)
	if err != nil {
		t.Fatal(err)
	}
	view := got.(*corev1.Pod)
	if diff := cmp.Diff(queue.PodRequests(pod), queue.PodRequests(view)); diff != "" {
		t.Errorf("requests of the view (-pod +view):\n%s", diff)
	}
	if diff := cmp.Diff(queue.MembershipOf(pod, nil), queue.MembershipOf(view, nil)); diff != "" {
		t.Errorf("membership of the view (-pod +view):\n%s", diff)
	}
	if view.Spec.NodeName != "n1" || view.Status.Phase != corev1.PodRunning || view.Name != "p" || view.UID != "u" {
		t.Errorf("view lost its node, phase or identity: %+v", view.ObjectMeta)
	}
	if n := len(view.Annotations) + len(view.OwnerReferences) + len(view.Spec.Volumes) + len(view.Spec.Containers[0].Env) +
		len(view.Spec.InitContainers[0].Command) + len(view.Status.Message); n != 0 {
		t.Errorf("view keeps %d annotations, owners, volumes, env, commands or messages; want none", n)
	}
	if pod.Annotations["note"] != big {
		t.Error("the view changed the pod it was made from")
	}
}
