package elasticjob

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

// Restart limits of task pods, DLRover's: a type without restartCount is
// relaunched up to DefaultRestartCount times, and none more than
// MaxRestartCount times.
const (
	DefaultRestartCount = 3
	MaxRestartCount     = 5
)

// RestartLimit is how many times a failed pod of the spec's type is
// relaunched.
func RestartLimit(spec *elasticv1alpha1.ReplicaSpec) int {
	if spec == nil || spec.RestartCount <= 0 {
		return DefaultRestartCount
	}
	return min(spec.RestartCount, MaxRestartCount)
}

// TaskManager creates, relaunches, stops and counts the pods of one task
// type (ps, worker, chief or evaluator) of a job. Its methods read pods
// from the API server and may be called again after an error.
type TaskManager struct {
	typ      elasticv1alpha1.ReplicaType
	client   client.Client
	reader   client.Reader
	recorder events.EventRecorder
}

// taskState is what SyncJobState saw of one type.
type taskState struct {
	// ranks is the number of ranks with a pod; succeeded of them ended
	// well; running pods are Running.
	ranks, succeeded, running int
}

// ReconcilePods scales the type to replicas alive pods (when replicas is
// not negative), then creates the plan's createPods and deletes its
// removePods of this type. New pods take the lowest free ranks and the
// next ids and get resource; a smaller count deletes the Pending and
// Running pods of the highest ranks first.
func (m *TaskManager) ReconcilePods(ctx context.Context, job *elasticv1alpha1.ElasticJob, replicas int, resource corev1.ResourceList, plan *elasticv1alpha1.ScalePlan, view clusterView) error {
	pods, err := listPods(ctx, m.reader, job, m.typ)
	if err != nil {
		return err
	}
	view.rdzvIP = m.rdzvIP(job, pods)
	if replicas >= 0 {
		if err := m.scale(ctx, job, pods, replicas, resource, view); err != nil {
			return err
		}
	}
	if plan == nil {
		return nil
	}
	for _, pm := range plan.Spec.CreatePods {
		if pm.Type != m.typ {
			continue
		}
		tp := taskPod{typ: m.typ, id: pm.ID, rank: pm.RankIndex, name: pm.Name, service: pm.Service, resource: pm.Resource}
		tp.restarts = restartsOfRank(pods, pm.RankIndex)
		if err := m.create(ctx, job, tp, view); err != nil {
			return err
		}
	}
	for _, pm := range plan.Spec.RemovePods {
		if i := slices.IndexFunc(pods, func(p corev1.Pod) bool { return p.Name == pm.Name }); i >= 0 && (pm.Type == "" || pm.Type == m.typ) {
			if err := deletePod(ctx, m.client, &pods[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// scale creates or deletes pods until replicas ranks have an alive pod.
func (m *TaskManager) scale(ctx context.Context, job *elasticv1alpha1.ElasticJob, pods []corev1.Pod, replicas int, resource corev1.ResourceList, view clusterView) error {
	latest := latestByRank(pods)
	var aliveRanks []int
	for rank, p := range latest {
		if alive(p) {
			aliveRanks = append(aliveRanks, rank)
		}
	}
	slices.Sort(aliveRanks)
	log := ctrl.LoggerFrom(ctx).WithValues("replicaType", m.typ)
	switch diff := replicas - len(aliveRanks); {
	case diff > 0:
		log.V(3).Info("Scaling up", "alive", len(aliveRanks), "replicas", replicas)
		id := maxID(pods)
		for rank := 0; diff > 0; rank++ {
			if slices.Contains(aliveRanks, rank) {
				continue
			}
			id++
			tp := taskPod{typ: m.typ, id: id, rank: rank, resource: resource, restarts: restartsOfRank(pods, rank)}
			if err := m.create(ctx, job, tp, view); err != nil {
				return err
			}
			diff--
		}
	case diff < 0:
		log.V(3).Info("Scaling down", "alive", len(aliveRanks), "replicas", replicas)
		for i := len(aliveRanks) - 1; i >= 0 && diff < 0; i-- {
			p := latest[aliveRanks[i]]
			if !running(p) {
				continue
			}
			if err := deletePod(ctx, m.client, p); err != nil {
				return err
			}
			diff++
		}
	}
	return nil
}

// restartsOfRank is the restart count of a new pod of rank: one more than
// the highest of the rank's pods, or 0 for a new rank.
func restartsOfRank(pods []corev1.Pod, rank int) int {
	if p := latestByRank(pods)[rank]; p != nil {
		return labelInt(p, elasticv1alpha1.RestartCountLabelKey) + 1
	}
	return 0
}

// create creates the pod tp and then its Service; either existing already
// is not an error.
func (m *TaskManager) create(ctx context.Context, job *elasticv1alpha1.ElasticJob, tp taskPod, view clusterView) error {
	pod, err := newTaskPod(job, tp, view)
	if err != nil {
		return err
	}
	if err := m.client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating pod %s: %w", pod.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(3).Info("Created pod", "pod", pod.Name, "rank", tp.rank, "restartCount", tp.restarts)
	return m.ensureService(ctx, newTaskService(job, tp))
}

// ensureService creates svc, or updates the selector and ports of the
// Service of that name.
func (m *TaskManager) ensureService(ctx context.Context, svc *corev1.Service) error {
	err := m.client.Create(ctx, svc)
	if err == nil || !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("creating Service %s: %w", svc.Name, err)
		}
		return nil
	}
	cur := &corev1.Service{}
	if err := m.reader.Get(ctx, client.ObjectKeyFromObject(svc), cur); err != nil {
		return fmt.Errorf("getting Service %s: %w", svc.Name, err)
	}
	if equality.Semantic.DeepEqual(cur.Spec.Selector, svc.Spec.Selector) && equality.Semantic.DeepEqual(cur.Spec.Ports, svc.Spec.Ports) {
		return nil
	}
	cur.Spec.Selector, cur.Spec.Ports = svc.Spec.Selector, svc.Spec.Ports
	if err := m.client.Update(ctx, cur); err != nil {
		return fmt.Errorf("updating Service %s: %w", svc.Name, err)
	}
	return nil
}

// rdzvIP is the IP of the type's pod with id 0, the rendezvous of
// AllreduceStrategy; empty while it has none.
func (m *TaskManager) rdzvIP(job *elasticv1alpha1.ElasticJob, pods []corev1.Pod) string {
	name := TaskName(job.Name, m.typ, 0)
	for i := range pods {
		if pods[i].Name == name {
			return pods[i].Status.PodIP
		}
	}
	return ""
}

// HandleFaultPods relaunches each rank whose pod failed (evictions
// included) as a new pod of the same rank, with the next id, the failed
// pod's resources and a restart-count one higher, while the count is below
// the type's limit. It returns the failed pod of a rank out of relaunches,
// or nil. The failed pods are kept for their logs.
func (m *TaskManager) HandleFaultPods(ctx context.Context, job *elasticv1alpha1.ElasticJob, view clusterView) (*corev1.Pod, error) {
	pods, err := listPods(ctx, m.reader, job, m.typ)
	if err != nil {
		return nil, err
	}
	view.rdzvIP = m.rdzvIP(job, pods)
	limit := RestartLimit(replicaSpecFor(job, m.typ))
	latest := latestByRank(pods)
	ranks := make([]int, 0, len(latest))
	for rank := range latest {
		ranks = append(ranks, rank)
	}
	slices.Sort(ranks)
	id := maxID(pods)
	for _, rank := range ranks {
		p := latest[rank]
		if p.Status.Phase != corev1.PodFailed || rank < 0 {
			continue
		}
		restarts := labelInt(p, elasticv1alpha1.RestartCountLabelKey)
		if restarts >= limit {
			return p, nil
		}
		id++
		tp := taskPod{typ: m.typ, id: id, rank: rank, restarts: restarts + 1}
		pod, err := newTaskPod(job, tp, view)
		if err != nil {
			return nil, err
		}
		pod.Spec.Containers[0].Resources = *p.Spec.Containers[0].Resources.DeepCopy()
		if err := m.client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("relaunching pod %s as %s: %w", p.Name, pod.Name, err)
		}
		if err := m.ensureService(ctx, newTaskService(job, tp)); err != nil {
			return nil, err
		}
		ctrl.LoggerFrom(ctx).Info("Relaunched failed pod", "failed", p.Name, "pod", pod.Name, "restartCount", tp.restarts, "limit", limit)
		m.recorder.Eventf(job, pod, corev1.EventTypeNormal, "Relaunched", "Relaunch",
			"Pod %s failed (%s); relaunched as %s, restart %d of %d", p.Name, failReason(p), pod.Name, tp.restarts, limit)
	}
	return nil, nil
}

// failReason is why a pod failed, for messages.
func failReason(p *corev1.Pod) string {
	if p.Status.Reason != "" {
		return p.Status.Reason
	}
	for _, s := range p.Status.ContainerStatuses {
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 {
			return "exit code " + strconv.Itoa(int(t.ExitCode))
		}
	}
	return "Failed"
}

// StopRunningPods deletes the type's Pending and Running pods.
func (m *TaskManager) StopRunningPods(ctx context.Context, job *elasticv1alpha1.ElasticJob) error {
	pods, err := listPods(ctx, m.reader, job, m.typ)
	if err != nil {
		return err
	}
	return deleteRunning(ctx, m.client, pods)
}

// SyncJobState counts the type's pods into the job's status and returns
// what it saw of the ranks.
func (m *TaskManager) SyncJobState(ctx context.Context, job *elasticv1alpha1.ElasticJob) (taskState, error) {
	pods, err := listPods(ctx, m.reader, job, m.typ)
	if err != nil {
		return taskState{}, err
	}
	setReplicaStatus(job, m.typ, pods)
	var s taskState
	for _, p := range latestByRank(pods) {
		s.ranks++
		if p.Status.Phase == corev1.PodSucceeded {
			s.succeeded++
		}
	}
	for i := range pods {
		if pods[i].Status.Phase == corev1.PodRunning {
			s.running++
		}
	}
	return s, nil
}
