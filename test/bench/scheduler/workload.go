package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

// coschedulingGroupLabel names a pod's PodGroup for scheduler-plugins
// (scheduling.x-k8s.io/v1alpha1's PodGroupLabel).
const coschedulingGroupLabel = "scheduling.x-k8s.io/pod-group"

// openQueue is the T9k queue of the throughput and gang measurements: every
// node, every namespace, no quota.
const openQueue = "bench-open"

// pod is a pod for profile asking for 100m cpu, 128Mi and gpus GPUs, with
// labels; it never runs a container (kwok only reports it Running).
func pod(namespace, name, profile string, gpus int, labels map[string]string) *corev1.Pod {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
	var lim corev1.ResourceList
	if gpus > 0 {
		q := *resource.NewQuantity(int64(gpus), resource.DecimalSI)
		req[gpuResource] = q
		lim = corev1.ResourceList{gpuResource: q}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			SchedulerName:                 profile,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "c", Image: "pause", Resources: corev1.ResourceRequirements{
				Requests: req, Limits: lim,
			}}},
		},
	}
}

// queue creates a T9k Queue open to every namespace on every node.
func queue(ctx context.Context, c client.Client, name string, priority int32) error {
	return c.Create(ctx, &schedv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       schedv1beta1.QueueSpec{Priority: priority, NamespaceSelector: &metav1.LabelSelector{}},
	})
}

// gangKind is how one scheduler is given gangs.
type gangKind struct {
	// groupLabel is the pod label naming the gang.
	groupLabel string
	// podGroup returns the gang's PodGroup of minMember.
	podGroup func(namespace, name string, minMember int) client.Object
}

// t9kGangs are T9k PodGroups in openQueue.
var t9kGangs = gangKind{
	groupLabel: schedv1beta1.GroupNameLabel,
	podGroup: func(namespace, name string, minMember int) client.Object {
		return &schedv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec:       schedv1beta1.PodGroupSpec{MinMember: int32(minMember), Queue: openQueue},
		}
	},
}

// coschedulingGangs are scheduler-plugins PodGroups.
var coschedulingGangs = gangKind{
	groupLabel: coschedulingGroupLabel,
	podGroup: func(namespace, name string, minMember int) client.Object {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "scheduling.x-k8s.io/v1alpha1",
			"kind":       "PodGroup",
			"metadata":   map[string]any{"namespace": namespace, "name": name},
			"spec":       map[string]any{"minMember": int64(minMember)},
		}}
	},
}

// podName is the name of pod i of a measurement.
func podName(prefix string, i int) string { return fmt.Sprintf("%s-%05d", prefix, i) }
