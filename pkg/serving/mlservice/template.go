package mlservice

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/ptr"

	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
	"github.com/accelstack/accelstack/pkg/serving"
)

// mergePodSpec strategic-merge-patches the PodSpec JSON patch (nil for
// none) onto base: containers merge by name and new ones are appended,
// scalars are overridden, plain lists such as args are replaced.
func mergePodSpec(base corev1.PodSpec, patch []byte) (corev1.PodSpec, error) {
	if len(bytes.TrimSpace(patch)) == 0 || string(bytes.TrimSpace(patch)) == "null" {
		return base, nil
	}
	b, err := json.Marshal(base)
	if err != nil {
		return base, fmt.Errorf("encoding the runtime's pod: %w", err)
	}
	merged, err := strategicpatch.StrategicMergePatch(b, patch, corev1.PodSpec{})
	if err != nil {
		return base, fmt.Errorf("merging the template onto the runtime's: %w", err)
	}
	var out corev1.PodSpec
	if err := json.Unmarshal(merged, &out); err != nil {
		return base, fmt.Errorf("decoding the merged pod: %w", err)
	}
	// A strategic merge puts new containers first; they go last.
	out.Containers = baseFirst(base.Containers, out.Containers)
	return out, nil
}

// baseFirst orders merged as base's containers, then the new ones in
// their order.
func baseFirst(base, merged []corev1.Container) []corev1.Container {
	inBase := map[string]int{}
	for i, c := range base {
		inBase[c.Name] = i
	}
	out := make([]corev1.Container, 0, len(merged))
	var added []corev1.Container
	for _, c := range merged {
		if _, ok := inBase[c.Name]; !ok {
			added = append(added, c)
		}
	}
	for _, b := range base {
		for _, c := range merged {
			if c.Name == b.Name {
				out = append(out, c)
			}
		}
	}
	return append(out, added...)
}

// predictorPod returns the pod template of a release served by rt (nil
// for a predictor with a template of its own only).
func predictorPod(m *tensorstackv1beta1.MLService, r tensorstackv1beta1.ReleaseSpec, rt *tensorstackv1beta1.MLServiceRuntime, image string) (corev1.PodTemplateSpec, error) {
	var pod corev1.PodTemplateSpec
	p := r.Predictor
	if rt != nil {
		pod.Labels = maps.Clone(rt.Spec.Template.Metadata.Labels)
		pod.Annotations = maps.Clone(rt.Spec.Template.Metadata.Annotations)
		pod.Spec = *rt.Spec.Template.Spec.DeepCopy()
	}
	if t := p.Template; t != nil {
		pod.Labels = merge(pod.Labels, t.Metadata.Labels)
		pod.Annotations = merge(pod.Annotations, t.Metadata.Annotations)
		if t.Spec != nil {
			spec, err := mergePodSpec(pod.Spec, t.Spec.Raw)
			if err != nil {
				return pod, err
			}
			pod.Spec = spec
		}
	}
	if len(pod.Spec.Containers) == 0 {
		return pod, fmt.Errorf("release %s: the pod has no container", r.Name)
	}
	var params map[string]string
	if p.Model != nil {
		params = p.Model.Parameters
	}
	if err := renderArgs(&pod.Spec, params); err != nil {
		return pod, fmt.Errorf("release %s: %w", r.Name, err)
	}
	for _, cr := range p.ContainersResources {
		for i := range pod.Spec.Containers {
			if pod.Spec.Containers[i].Name == cr.Name {
				pod.Spec.Containers[i].Resources = *cr.Resources.DeepCopy()
			}
		}
	}
	finishPod(m, &pod, p.Storage, image, labels(m, componentPredict, r.Name))
	return pod, nil
}

// transformerPod returns the pod template of the transformer of m.
func transformerPod(m *tensorstackv1beta1.MLService, image string) (corev1.PodTemplateSpec, error) {
	t := m.Spec.Transformer
	pod := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
		Labels: maps.Clone(t.Template.Metadata.Labels), Annotations: maps.Clone(t.Template.Metadata.Annotations),
	}}
	if t.Template.Spec != nil {
		spec, err := mergePodSpec(corev1.PodSpec{}, t.Template.Spec.Raw)
		if err != nil {
			return pod, fmt.Errorf("transformer: %w", err)
		}
		pod.Spec = spec
	}
	if len(pod.Spec.Containers) == 0 {
		return pod, fmt.Errorf("transformer: the pod has no container")
	}
	c := &pod.Spec.Containers[0]
	c.Env = append(c.Env, corev1.EnvVar{Name: "PREDICTOR_HOST", Value: predictHost(m) + "." + m.Namespace + "." + Domain})
	finishPod(m, &pod, t.Storage, image, labels(m, componentTransformer, ""))
	return pod, nil
}

// finishPod applies the storage, the scheduler and the component's labels
// to pod.
func finishPod(m *tensorstackv1beta1.MLService, pod *corev1.PodTemplateSpec, storage *tensorstackv1beta1.ModelStorage, image string, l map[string]string) {
	serving.ApplyStorage(&pod.Spec, storage, image)
	pod.Labels = merge(pod.Labels, l)
	if s := m.Spec.Scheduler; s != nil && s.T9kScheduler != nil {
		pod.Spec.SchedulerName = schedulerv1beta1.SchedulerName
		pod.Labels[schedulerv1beta1.QueueLabel] = s.T9kScheduler.Queue
	}
	pod.Annotations = queue.CarryGrant(pod.Annotations, m, pod.Labels[schedulerv1beta1.QueueLabel])
	if pod.Spec.AutomountServiceAccountToken == nil {
		pod.Spec.AutomountServiceAccountToken = ptr.To(false)
	}
}

// merge returns a copy of a with the entries of b.
func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}
