package eventlistener

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
)

// Reasons of the Ready conditions.
const (
	// ReasonDeploymentAvailable: the server's Deployment is available (True).
	ReasonDeploymentAvailable = "DeploymentAvailable"
	// ReasonDeploymentProgressing: the Deployment has no availability yet
	// (Unknown).
	ReasonDeploymentProgressing = "DeploymentProgressing"
	// ReasonDeploymentUnavailable: the Deployment is not available (False).
	ReasonDeploymentUnavailable = "DeploymentUnavailable"
	// ReasonProgressDeadlineExceeded: the Deployment's rollout is stuck
	// (False).
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonNoReplicas: spec.replicas is 0 (False).
	ReasonNoReplicas = "NoReplicas"
	// ReasonDeploymentFailed: the controller could not write the
	// Deployment or Service (False).
	ReasonDeploymentFailed = "DeploymentFailed"
	// ReasonEventListenerNotFound: a listener the trigger names does not
	// exist (False).
	ReasonEventListenerNotFound = "EventListenerNotFound"
	// ReasonInvalidSpec: the trigger's spec is invalid (False).
	ReasonInvalidSpec = "InvalidSpec"
)

// Event reasons.
const (
	// EventCreated: the controller created a Deployment or Service.
	EventCreated = "Created"
	// EventFailed: the controller could not write one.
	EventFailed = "Failed"
)

// ready is the state of a Ready condition.
type ready struct {
	status          corev1.ConditionStatus
	reason, message string
}

// readiness is the Ready condition of a server with the Deployment dep;
// kind names the listener or trigger in the message.
func readiness(dep *appsv1.Deployment, kind string) ready {
	if dep == nil {
		return ready{corev1.ConditionUnknown, ReasonDeploymentProgressing, "Waiting for the Deployment"}
	}
	if ptr.Deref(dep.Spec.Replicas, 1) == 0 {
		return ready{corev1.ConditionFalse, ReasonNoReplicas, fmt.Sprintf("The %s has 0 replicas", kind)}
	}
	var available, progressing *appsv1.DeploymentCondition
	for i := range dep.Status.Conditions {
		switch c := &dep.Status.Conditions[i]; c.Type {
		case appsv1.DeploymentAvailable:
			available = c
		case appsv1.DeploymentProgressing:
			progressing = c
		}
	}
	switch {
	case progressing != nil && progressing.Status == corev1.ConditionFalse && progressing.Reason == "ProgressDeadlineExceeded":
		return ready{corev1.ConditionFalse, ReasonProgressDeadlineExceeded, fmt.Sprintf("Deployment %s: %s", dep.Name, progressing.Message)}
	case available != nil && available.Status == corev1.ConditionTrue && dep.Status.AvailableReplicas > 0:
		return ready{corev1.ConditionTrue, ReasonDeploymentAvailable, fmt.Sprintf("The %s is Ready", kind)}
	case available != nil && available.Status == corev1.ConditionFalse:
		return ready{corev1.ConditionFalse, ReasonDeploymentUnavailable, fmt.Sprintf("Deployment %s: %s", dep.Name, available.Message)}
	}
	return ready{corev1.ConditionUnknown, ReasonDeploymentProgressing, fmt.Sprintf("Waiting for Deployment %s to become available", dep.Name)}
}

// setReady sets the Ready condition of conds; its transition time changes
// only with its status.
func setReady(conds *[]triggersv1beta1.Condition, r ready) {
	status, reason, message := r.status, r.reason, r.message
	for i := range *conds {
		c := &(*conds)[i]
		if c.Type != triggersv1beta1.ConditionReady {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = metav1.Now()
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	*conds = append(*conds, triggersv1beta1.Condition{
		Type: triggersv1beta1.ConditionReady, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.Now(),
	})
}
