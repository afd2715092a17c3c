package serving

import (
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/datacube/executorenv"
)

// Reasons of the ModelDownloaded and Ready conditions.
const (
	ReasonNoStorage       = "NoStorage"
	ReasonPVCMounted      = "PVCMounted"
	ReasonDownloaded      = "Downloaded"
	ReasonDownloading     = "Downloading"
	ReasonDownloadFailed  = "DownloadFailed"
	ReasonNoDeployment    = "NoDeployment"
	ReasonScaledToZero    = "ScaledToZero"
	ReasonReplicasWaiting = "MinimumReplicasUnavailable"
	ReasonReplicasReady   = "MinimumReplicasAvailable"
	ReasonInvalidSpec     = "InvalidSpec"
)

// maxMessage bounds a message copied from a pod into a condition.
const maxMessage = 1024

// ModelDownloaded returns the ModelDownloaded condition of a service with
// storage whose pods are pods: True for a PVC or once a pod's storage
// initializer succeeded, False with the executor's error once one failed
// and no pod has the model, False while downloading.
func ModelDownloaded(storage *tensorstackv1beta1.ModelStorage, pods []corev1.Pod) tensorstackv1beta1.WorkloadCondition {
	c := tensorstackv1beta1.WorkloadCondition{Type: tensorstackv1beta1.ConditionModelDownloaded, Status: corev1.ConditionTrue}
	switch {
	case storage == nil || (storage.PVC == nil && storage.S3 == nil):
		c.Reason, c.Message = ReasonNoStorage, "The service names no model storage"
		return c
	case storage.PVC != nil:
		c.Reason, c.Message = ReasonPVCMounted, fmt.Sprintf("The model is mounted from PVC %s", storage.PVC.Name)
		return c
	}
	var failure string
	for i := range pods {
		for _, s := range pods[i].Status.InitContainerStatuses {
			if s.Name != StorageInitializerName {
				continue
			}
			if t := s.State.Terminated; t != nil && t.ExitCode == 0 {
				c.Reason, c.Message = ReasonDownloaded, fmt.Sprintf("The model was downloaded from %s", storage.S3.URI)
				return c
			}
			for _, t := range []*corev1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
				if t != nil && t.ExitCode != 0 && failure == "" {
					failure = downloadError(t)
				}
			}
		}
	}
	c.Status = corev1.ConditionFalse
	if failure != "" {
		c.Reason, c.Message = ReasonDownloadFailed, failure
		return c
	}
	c.Reason, c.Message = ReasonDownloading, fmt.Sprintf("Downloading the model from %s", storage.S3.URI)
	return c
}

// downloadError is the error the executor reported in its termination
// message (a executorenv.Progress), or the container's reason.
func downloadError(t *corev1.ContainerStateTerminated) string {
	var p executorenv.Progress
	msg := t.Reason
	if err := json.Unmarshal([]byte(t.Message), &p); err == nil && p.Error != "" {
		msg = p.Error
	} else if m := strings.TrimSpace(t.Message); m != "" && !strings.HasPrefix(m, "{") {
		msg = m
	}
	if msg == "" {
		msg = fmt.Sprintf("exit code %d", t.ExitCode)
	}
	if len(msg) > maxMessage {
		msg = msg[:maxMessage]
	}
	return "Downloading the model failed: " + msg
}

// Replicas is the state of a Deployment's pods.
type Replicas struct {
	// Ready is true when the Deployment has its minimum of available pods.
	Ready bool
	// ReadyReplicas and TotalReplicas count its pods.
	ReadyReplicas, TotalReplicas int32
	// Reason and Message explain the state.
	Reason, Message string
}

// DeploymentReplicas reads the state of dep, nil when it does not exist:
// ready once its Available condition is True and it wants pods.
func DeploymentReplicas(dep *appsv1.Deployment) Replicas {
	if dep == nil {
		return Replicas{Reason: ReasonNoDeployment, Message: "The Deployment is not created yet"}
	}
	r := Replicas{ReadyReplicas: dep.Status.ReadyReplicas, TotalReplicas: dep.Status.Replicas}
	if ptr.Deref(dep.Spec.Replicas, 1) == 0 {
		r.Reason, r.Message = ReasonScaledToZero, fmt.Sprintf("Deployment %s has no replicas", dep.Name)
		return r
	}
	r.Reason, r.Message = ReasonReplicasWaiting, fmt.Sprintf("Deployment %s: %d of %d pods ready", dep.Name, r.ReadyReplicas, ptr.Deref(dep.Spec.Replicas, 1))
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && dep.Status.ObservedGeneration >= dep.Generation {
			r.Ready = c.Status == corev1.ConditionTrue && r.ReadyReplicas > 0
			if c.Reason != "" {
				r.Reason = c.Reason
			}
			if c.Message != "" {
				r.Message = c.Message
			}
		}
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" && !r.Ready {
			r.Reason, r.Message = c.Reason, c.Message
		}
	}
	return r
}
