package elasticjob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

// DefaultMasterImage is DLRover's master image, used when the master
// template of a job names none.
const DefaultMasterImage = "registry.cn-hangzhou.aliyuncs.com/intell-ai/dlrover:latest"

// DefaultBrainService is the address of DLRover Brain when optimizeMode is
// cluster and brainService is empty.
const DefaultBrainService = "dlrover-brain.dlrover.svc.cluster.local:50001"

// masterArgAnnotations are job annotations passed to the default master
// command as --<key> <value>.
var masterArgAnnotations = []string{"pending_timeout", "pending_fail_strategy", "service_type", "pre_check_ops", "pre_check_bypass"}

// masterCommand is the command of a master whose image the controller chose.
func masterCommand(job *elasticv1alpha1.ElasticJob) []string {
	cmd := fmt.Sprintf("python -m dlrover.python.master.main --platform pyk8s --namespace %s --job_name %s --port %d",
		job.Namespace, job.Name, MasterServicePort)
	for _, k := range masterArgAnnotations {
		if v, ok := job.Annotations[k]; ok {
			cmd += fmt.Sprintf(" --%s %s", k, v)
		}
	}
	return []string{"/bin/bash", "-c", cmd}
}

// newMasterPod returns the master pod of a job that has a master spec. A
// container without an image gets image, DLRover's master command and its
// default resources.
func newMasterPod(job *elasticv1alpha1.ElasticJob, image string) *corev1.Pod {
	labels := jobLabels(job.Name, elasticv1alpha1.ReplicaTypeMaster)
	labels[elasticv1alpha1.ReplicaIndexLabelKey] = "0"
	pod := newPod(job, &job.Spec.ReplicaSpecs[elasticv1alpha1.ReplicaTypeMaster].Template, MasterName(job.Name), labels)
	c := &pod.Spec.Containers[0]
	if c.Image == "" {
		c.Image = image
		if len(c.Command) == 0 && len(c.Args) == 0 {
			c.Command = masterCommand(job)
		}
		if len(c.Resources.Requests) == 0 && len(c.Resources.Limits) == 0 {
			rl := corev1.ResourceList{
				corev1.ResourceCPU:              resource.MustParse("1"),
				corev1.ResourceMemory:           resource.MustParse("2Gi"),
				corev1.ResourceEphemeralStorage: resource.MustParse("2Gi"),
			}
			c.Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
		}
	}
	if pod.Spec.RestartPolicy == "" {
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	c.Env = append(c.Env, fieldEnv(envPodIP, "status.podIP"))
	if job.Spec.OptimizeMode == "cluster" {
		addr := job.Spec.BrainService
		if addr == "" {
			addr = DefaultBrainService
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: envBrainAddr, Value: addr})
	}
	return pod
}

// MasterManager creates, watches and stops DLRover's job master pod.
type MasterManager struct {
	client client.Client
	reader client.Reader
	image  string
}

// ReconcilePods creates the master pod and its Service when the job has a
// master spec and the pod does not exist; it is idempotent.
func (m *MasterManager) ReconcilePods(ctx context.Context, job *elasticv1alpha1.ElasticJob) error {
	if !hasMaster(job) {
		return nil
	}
	pod, err := m.masterPod(ctx, job)
	if err != nil || pod != nil {
		return err
	}
	if err := m.client.Create(ctx, newMasterPod(job, m.image)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the master pod: %w", err)
	}
	svc := newService(job, elasticv1alpha1.ReplicaTypeMaster, MasterName(job.Name), MasterServicePort, nil)
	if err := m.client.Create(ctx, svc); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the master Service: %w", err)
	}
	return nil
}

// masterPod returns the job's master pod, or nil when there is none.
func (m *MasterManager) masterPod(ctx context.Context, job *elasticv1alpha1.ElasticJob) (*corev1.Pod, error) {
	pods, err := listPods(ctx, m.reader, job, elasticv1alpha1.ReplicaTypeMaster)
	if err != nil || len(pods) == 0 {
		return nil, err
	}
	return &pods[len(pods)-1], nil
}

// SyncJobState counts the master pod into the job's status and sets the
// job's condition from its phase: the master decides the job's outcome. It
// reports whether the job has a master spec; while the master pod is
// missing, as between its deletion and its re-creation showing in the
// cache, the condition stays as it was, so the workers never decide.
func (m *MasterManager) SyncJobState(ctx context.Context, job *elasticv1alpha1.ElasticJob) (bool, error) {
	if !hasMaster(job) {
		return false, nil
	}
	pod, err := m.masterPod(ctx, job)
	if err != nil || pod == nil {
		return true, err
	}
	setReplicaStatus(job, elasticv1alpha1.ReplicaTypeMaster, []corev1.Pod{*pod})
	name := job.Namespace + "/" + job.Name
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		finish(job, elasticv1alpha1.JobSucceeded, ReasonJobSucceeded, fmt.Sprintf("job(%s) successfully completed", name))
	case corev1.PodFailed:
		reason := pod.Status.Reason
		if reason == "" {
			reason = ReasonJobFailed
		}
		finish(job, elasticv1alpha1.JobFailed, reason, fmt.Sprintf("job(%s) has failed", name))
	case corev1.PodRunning:
		setCondition(job, elasticv1alpha1.JobRunning, ReasonJobRunning, fmt.Sprintf("job(%s) is running.", name))
	default:
		setCondition(job, elasticv1alpha1.JobPending, ReasonJobPending, fmt.Sprintf("job(%s) is pending.", name))
	}
	return true, nil
}

// StopRunningPods deletes the master pod if it is Pending or Running.
func (m *MasterManager) StopRunningPods(ctx context.Context, job *elasticv1alpha1.ElasticJob) error {
	pods, err := listPods(ctx, m.reader, job, elasticv1alpha1.ReplicaTypeMaster)
	if err != nil {
		return err
	}
	return deleteRunning(ctx, m.client, pods)
}
