package elasticjob

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

// listPods returns the job's pods of type t that the job controls, by
// replica-index. It reads the API server, not a cache, so that what the
// last reconcile created or deleted is seen.
func listPods(ctx context.Context, r client.Reader, job *elasticv1alpha1.ElasticJob, t elasticv1alpha1.ReplicaType) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingLabels{
		elasticv1alpha1.JobNameLabelKey:     job.Name,
		elasticv1alpha1.ReplicaTypeLabelKey: string(t),
	}); err != nil {
		return nil, fmt.Errorf("listing %s pods: %w", t, err)
	}
	pods := slices.DeleteFunc(list.Items, func(p corev1.Pod) bool {
		ref := metav1.GetControllerOf(&p)
		return ref == nil || ref.UID != job.UID
	})
	slices.SortStableFunc(pods, func(a, b corev1.Pod) int {
		return labelInt(&a, elasticv1alpha1.ReplicaIndexLabelKey) - labelInt(&b, elasticv1alpha1.ReplicaIndexLabelKey)
	})
	return pods, nil
}

// labelInt is the integer value of a label of pod; -1 when absent or not a
// number.
func labelInt(pod *corev1.Pod, key string) int {
	v, err := strconv.Atoi(pod.Labels[key])
	if err != nil {
		return -1
	}
	return v
}

// alive reports whether the pod counts towards a ScalePlan's replicas:
// Pending, Running or Succeeded and not being deleted.
func alive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodUnknown
}

// running reports whether the pod is Pending or Running.
func running(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodPending || p.Status.Phase == corev1.PodRunning || p.Status.Phase == ""
}

// latestByRank returns, for each rank, the pod with the highest restart
// count (then replica index): the one that stands for the rank now.
func latestByRank(pods []corev1.Pod) map[int]*corev1.Pod {
	out := map[int]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		rank := labelInt(p, elasticv1alpha1.RankIndexLabelKey)
		cur := out[rank]
		if cur == nil || newer(p, cur) {
			out[rank] = p
		}
	}
	return out
}

// newer reports whether a replaced b for their rank.
func newer(a, b *corev1.Pod) bool {
	ra, rb := labelInt(a, elasticv1alpha1.RestartCountLabelKey), labelInt(b, elasticv1alpha1.RestartCountLabelKey)
	if ra != rb {
		return ra > rb
	}
	return labelInt(a, elasticv1alpha1.ReplicaIndexLabelKey) > labelInt(b, elasticv1alpha1.ReplicaIndexLabelKey)
}

// maxID is the highest replica index of pods; -1 for none.
func maxID(pods []corev1.Pod) int {
	m := -1
	for i := range pods {
		m = max(m, labelInt(&pods[i], elasticv1alpha1.ReplicaIndexLabelKey))
	}
	return m
}

// aliveRanks is the number of ranks with an alive pod.
func aliveRanks(pods []corev1.Pod) int {
	n := 0
	for _, p := range latestByRank(pods) {
		if alive(p) {
			n++
		}
	}
	return n
}

// deletePod deletes pod at once; a pod already gone is not an error.
func deletePod(ctx context.Context, c client.Client, pod *corev1.Pod) error {
	if err := c.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting pod %s: %w", pod.Name, err)
	}
	return nil
}

// deleteRunning deletes the pods that are Pending or Running.
func deleteRunning(ctx context.Context, c client.Client, pods []corev1.Pod) error {
	for i := range pods {
		if running(&pods[i]) && pods[i].DeletionTimestamp == nil {
			if err := deletePod(ctx, c, &pods[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
