package jobs

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/accelstack/accelstack/pkg/accelerator"
	"github.com/accelstack/accelstack/pkg/ranktable"
)

// Ascend jobs: pods that request Ascend chips get the rank-table label and
// mount the job's rank-table ConfigMap, which the rank-table controller fills
// once every pod has its chips. The names are the rank-table controller's
// (pkg/ranktable), so both sides agree in one place.

// requestsAscend reports whether container c requests Ascend chips.
func requestsAscend(c *corev1.Container) bool {
	q, ok := c.Resources.Limits[accelerator.Ascend910]
	if !ok {
		q, ok = c.Resources.Requests[accelerator.Ascend910]
	}
	return ok && !q.IsZero()
}

// usesAscend reports whether any replica of job requests Ascend chips.
func usesAscend(job *Job) bool {
	for _, r := range job.Replicas {
		for i := range r.Template.Spec.Containers {
			if requestsAscend(&r.Template.Spec.Containers[i]) {
				return true
			}
		}
	}
	return false
}

// rankTableName returns the name of job's rank-table ConfigMap.
func rankTableName(job string) string { return ranktable.ConfigMapPrefix + job }

// decorateAscend labels pod for the rank-table controller and mounts the
// job's rank table into the containers that request chips.
func decorateAscend(pod *corev1.Pod, job string) {
	mounted := false
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if !requestsAscend(c) {
			continue
		}
		mounted = true
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: ranktable.VolumeName, MountPath: ranktable.MountPath, ReadOnly: true})
	}
	if !mounted {
		return
	}
	if pod.Labels[ranktable.RingControllerLabel] == "" {
		pod.Labels[ranktable.RingControllerLabel] = ranktable.ChipTypeAscend910
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
		Name: ranktable.VolumeName,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: rankTableName(job)},
		}},
	})
}

// ensureRankTable creates job's rank-table ConfigMap, initializing, unless
// it exists. The rank-table controller completes it.
func (r *Reconciler) ensureRankTable(ctx context.Context, job *Job) error {
	obj := job.Object
	chip := ranktable.ChipTypeAscend910
	for _, rep := range job.Replicas {
		if v := rep.Template.Labels[ranktable.RingControllerLabel]; v != "" {
			chip = v
			break
		}
	}
	key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: rankTableName(obj.GetName())}
	if err := r.cache.Get(ctx, key, &corev1.ConfigMap{}); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("getting the rank-table ConfigMap %s: %w", key.Name, err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      rankTableName(obj.GetName()),
			Namespace: obj.GetNamespace(),
			Labels:    Labels(r.kind.Component(), obj.GetName()),
		},
		Data: map[string]string{ranktable.ConfigMapKey: fmt.Sprintf(`{"status":%q}`, ranktable.StatusInitializing)},
	}
	cm.Labels[ranktable.RingControllerLabel] = chip
	if err := SetOwner(obj, cm, r.scheme); err != nil {
		return err
	}
	if err := r.client.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the rank-table ConfigMap %s: %w", cm.Name, err)
	}
	return nil
}
