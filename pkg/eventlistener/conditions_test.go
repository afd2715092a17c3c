package eventlistener

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
)

// deploymentWith is a Deployment of replicas with the conditions and
// available replicas.
func deploymentWith(replicas, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}}
	d.Spec.Replicas = ptr.To(replicas)
	d.Status.AvailableReplicas = available
	d.Status.Conditions = conds
	return d
}

func cond(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason string) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: "m"}
}

func TestReadiness(t *testing.T) {
	tests := []struct {
		name       string
		dep        *appsv1.Deployment
		wantStatus corev1.ConditionStatus
		wantReason string
	}{
		{name: "no Deployment", wantStatus: corev1.ConditionUnknown, wantReason: ReasonDeploymentProgressing},
		{name: "no status", dep: deploymentWith(1, 0), wantStatus: corev1.ConditionUnknown, wantReason: ReasonDeploymentProgressing},
		{name: "available", dep: deploymentWith(1, 1, cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable")), wantStatus: corev1.ConditionTrue, wantReason: ReasonDeploymentAvailable},
		{name: "available without a pod", dep: deploymentWith(1, 0, cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "")), wantStatus: corev1.ConditionUnknown, wantReason: ReasonDeploymentProgressing},
		{name: "unavailable", dep: deploymentWith(1, 0, cond(appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable")), wantStatus: corev1.ConditionFalse, wantReason: ReasonDeploymentUnavailable},
		{
			name: "stuck",
			dep: deploymentWith(1, 1, cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, ""),
				cond(appsv1.DeploymentProgressing, corev1.ConditionFalse, "ProgressDeadlineExceeded")),
			wantStatus: corev1.ConditionFalse, wantReason: ReasonProgressDeadlineExceeded,
		},
		{name: "scaled to zero", dep: deploymentWith(0, 0, cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "")), wantStatus: corev1.ConditionFalse, wantReason: ReasonNoReplicas},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readiness(tt.dep, "EventListener")
			if got.status != tt.wantStatus || got.reason != tt.wantReason {
				t.Errorf("readiness = %+v, want %s %s", got, tt.wantStatus, tt.wantReason)
			}
		})
	}
	if got := readiness(deploymentWith(1, 1, cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "")), "EventListener"); got.message != "The EventListener is Ready" {
		t.Errorf("message %q, want the seed's", got.message)
	}
}

func TestSetReady(t *testing.T) {
	var conds []triggersv1beta1.Condition
	setReady(&conds, ready{corev1.ConditionUnknown, "A", "a"})
	if len(conds) != 1 || conds[0].Type != triggersv1beta1.ConditionReady || conds[0].LastTransitionTime.IsZero() {
		t.Fatalf("conditions %+v", conds)
	}
	past := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	conds[0].LastTransitionTime = past
	setReady(&conds, ready{corev1.ConditionUnknown, "B", "b"})
	if conds[0].LastTransitionTime != past || conds[0].Reason != "B" {
		t.Errorf("same status: %+v, want the time kept and the reason changed", conds[0])
	}
	setReady(&conds, ready{corev1.ConditionTrue, "C", "c"})
	if conds[0].LastTransitionTime == past || conds[0].Status != corev1.ConditionTrue || len(conds) != 1 {
		t.Errorf("new status: %+v, want a new time", conds)
	}
}
