package jobs

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
)

// newService returns the headless Service of replica r, rank rank: named
// like its pod, so that <job>-<type>-<rank> resolves to the pod's address,
// before the pod is ready too.
func (r *Reconciler) newService(job *Job, rep *Replica, rank int32) (*corev1.Service, error) {
	obj := job.Object
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      rep.PodName(obj.GetName(), rank),
			Namespace: obj.GetNamespace(),
			Labels:    ReplicaLabels(r.kind.Component(), obj.GetName(), rep, rank),
		},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 replicaSelector(obj.GetName(), rep.Type, rank),
			Ports:                    rep.Ports,
			PublishNotReadyAddresses: true,
		},
	}
	delete(svc.Labels, ComponentTypeLabel)
	if err := SetOwner(obj, svc, r.scheme); err != nil {
		return nil, err
	}
	return svc, nil
}

// gang returns the PodGroup's minMember of job.
func gang(job *Job) int32 {
	if job.MinMember > 0 {
		return job.MinMember
	}
	return job.Total()
}

// ensurePodGroup creates job's PodGroup for the T9k Scheduler, or brings
// its size and queue up to date.
func (r *Reconciler) ensurePodGroup(ctx context.Context, job *Job) error {
	obj := job.Object
	t9k := job.Scheduler.T9kScheduler
	want := schedulerv1beta1.PodGroupSpec{
		MinMember: gang(job),
		Queue:     t9k.Queue,
		Priority:  t9k.Priority,
	}
	for _, rep := range job.Replicas {
		want.Roles = append(want.Roles, schedulerv1beta1.Role{Name: rep.Type, MinMember: rep.RoleMin})
	}
	pg := &schedulerv1beta1.PodGroup{}
	err := r.cache.Get(ctx, client.ObjectKeyFromObject(obj), pg)
	switch {
	case apierrors.IsNotFound(err):
		pg = &schedulerv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: obj.GetName(), Namespace: obj.GetNamespace(), Labels: Labels(r.kind.Component(), obj.GetName())},
			Spec:       want,
		}
		if err := SetOwner(obj, pg, r.scheme); err != nil {
			return err
		}
		if err := r.client.Create(ctx, pg); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating PodGroup %s: %w", pg.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("getting PodGroup %s: %w", obj.GetName(), err)
	case !OwnedBy(pg, obj):
		return fmt.Errorf("PodGroup %s belongs to another object", pg.Name)
	case equality.Semantic.DeepEqual(pg.Spec, want):
		return nil
	}
	pg = pg.DeepCopy()
	pg.Spec = want
	if err := r.client.Update(ctx, pg); err != nil {
		return fmt.Errorf("updating PodGroup %s: %w", pg.Name, err)
	}
	return nil
}
