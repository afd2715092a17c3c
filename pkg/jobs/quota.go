package jobs

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// The ReplicaFailure condition of a job whose pods a ResourceQuota of its
// namespace refuses. The job is not failed: the engine creates the pods
// again every quotaRetry until the quota admits them.
const (
	// ReasonExceededQuota is the reason of ReplicaFailure True while the
	// API server refuses some of the job's pods for its namespace's quota.
	ReasonExceededQuota = "ExceededQuota"
	// reasonQuotaAdmits is the reason of ReplicaFailure False once the
	// refused pods are created.
	reasonQuotaAdmits = "QuotaAdmits"
	msgQuotaPrefix    = "The resource quota of the namespace refuses "
	msgQuotaAdmits    = "The resource quota of the namespace admits the job's pods."
)

// quotaRetry is how soon a job whose pods a quota refused tries again: the
// engine watches no ResourceQuota, so it does not see room made.
const quotaRetry = 15 * time.Second

// quotaMarkers are the beginnings of the refusals of the API server's
// ResourceQuota admission.
var quotaMarkers = []string{"exceeded quota:", "failed quota:", "status unknown for quota:", "insufficient quota to"}

// quotaRefusal reports whether err is the API server refusing an object
// for a ResourceQuota of its namespace.
func quotaRefusal(err error) bool {
	if !apierrors.IsForbidden(err) {
		return false
	}
	msg := err.Error()
	for _, m := range quotaMarkers {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// setQuotaRefused records in s that the quota refused the pods whose
// refusals, as the API server words them and sorted, are refused, out of
// wanted pods the reconcile tried to create. The first refusal is quoted.
func setQuotaRefused(s *batchv1beta1.JobStatus, refused []string, wanted int, now metav1.Time) {
	msg := msgQuotaPrefix + fmtCount(len(refused), wanted) + " pods the job is creating: " + refused[0]
	setCondition(s, batchv1beta1.JobReplicaFailure, corev1.ConditionTrue, ReasonExceededQuota, msg, now)
}

// clearQuotaRefused turns the ReplicaFailure condition of a quota refusal
// False, once the pods are created or no longer wanted; it leaves any other
// ReplicaFailure alone.
func clearQuotaRefused(s *batchv1beta1.JobStatus, now metav1.Time) {
	if quotaRefused(s) {
		setCondition(s, batchv1beta1.JobReplicaFailure, corev1.ConditionFalse, reasonQuotaAdmits, msgQuotaAdmits, now)
	}
}

// quotaRefused reports whether s says a quota refuses pods of the job.
func quotaRefused(s *batchv1beta1.JobStatus) bool {
	c := Condition(s, batchv1beta1.JobReplicaFailure)
	return c != nil && c.Status == corev1.ConditionTrue && c.Reason == ReasonExceededQuota
}
