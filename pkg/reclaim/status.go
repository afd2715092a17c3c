package reclaim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The reasons of the Idle condition.
const (
	// ReasonActive: Idle False, some activity within idle-after.
	ReasonActive = "Active"
	// ReasonNoActivity: Idle True, no activity for idle-after.
	ReasonNoActivity = "NoActivity"
	// ReasonSuspended: Idle True, and the Keeper suspended the workload.
	ReasonSuspended = "Suspended"
	// ReasonNeverIdle: Idle False, an RStudio notebook.
	ReasonNeverIdle = "NeverIdle"
	// ReasonEvidenceIncomplete: Idle Unknown, no activity seen but a
	// source that must be read could not be, or has not watched long
	// enough. An existing Idle condition keeps its status and reason then.
	ReasonEvidenceIncomplete = "EvidenceIncomplete"
)

// The reasons of the Keeper's events. Each names the evidence in its note.
const (
	// EventReasonIdle: the workload became Idle.
	EventReasonIdle = "Idle"
	// EventReasonActive: an Idle workload is active again.
	EventReasonActive = "Active"
	// EventReasonSuspended: the Keeper set spec.suspend.
	EventReasonSuspended = "Suspended"
	// EventReasonSuspendFailed: setting spec.suspend failed (Warning).
	EventReasonSuspendFailed = "SuspendFailed"
	// EventReasonInvalidConfig: a Namespace's annotation is invalid and its
	// default applies (Warning, on the Namespace).
	EventReasonInvalidConfig = "InvalidResourceKeeperConfig"
)

// act sets the Idle condition from the decision, suspends a workload
// that has been Idle for suspend-after, and records each change by an
// event naming the evidence.
func (k *Keeper) act(ctx context.Context, now time.Time, j job, d decision, summary string) {
	log := ctrl.LoggerFrom(ctx)
	w, cfg := j.w, j.cfg
	obj := w.object()
	cur := w.idle()
	wasIdle := cur != nil && cur.Status == corev1.ConditionTrue
	var next condition
	switch {
	case w.neverIdle() != "":
		next = condition{Status: corev1.ConditionFalse, Reason: ReasonNeverIdle, Message: summary}
	case d.verdict == active:
		next = condition{Status: corev1.ConditionFalse, Reason: ReasonActive, Message: "Active: " + summary}
		if wasIdle {
			log.V(3).Info("Active again", "evidence", summary)
			k.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventReasonActive, "Probe", "Active again: %s", truncate(summary))
		}
	case d.verdict == idle && !wasIdle:
		quiet := formatDuration(now.Sub(d.last))
		next = condition{Status: corev1.ConditionTrue, Reason: ReasonNoActivity,
			Message: fmt.Sprintf("No activity for %s: %s", quiet, summary)}
		log.V(3).Info("Idle", "evidence", summary)
		k.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventReasonIdle, "Probe",
			"Idle, no activity for %s (suspended after %s Idle): %s", quiet, formatDuration(cfg.SuspendAfter), truncate(summary))
	case d.verdict == idle:
		idleFor := now.Sub(cur.LastTransitionTime.Time)
		next = condition{Status: corev1.ConditionTrue, Reason: ReasonNoActivity,
			Message: fmt.Sprintf("Idle for %s: %s", formatDuration(idleFor), summary)}
		if idleFor >= cfg.SuspendAfter {
			if err := k.suspend(ctx, w); err != nil {
				log.Error(err, "Suspending")
				k.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventReasonSuspendFailed, "Suspend",
					"Idle for %s but could not be suspended: %v", formatDuration(idleFor), err)
			} else {
				next.Reason = ReasonSuspended
				next.Message = fmt.Sprintf("Suspended after %s Idle: %s", formatDuration(idleFor), summary)
				log.Info("Suspended", "idleFor", formatDuration(idleFor), "evidence", summary)
				k.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventReasonSuspended, "Suspend",
					"Suspended after %s Idle: %s", formatDuration(idleFor), truncate(summary))
			}
		}
	case cur == nil:
		next = condition{Status: corev1.ConditionUnknown, Reason: ReasonEvidenceIncomplete,
			Message: fmt.Sprintf("Cannot tell whether idle (%s): %s", d.why, summary)}
	default:
		next = condition{Status: cur.Status, Reason: cur.Reason,
			Message: fmt.Sprintf("Cannot tell whether still %s (%s): %s", stateOf(cur.Status), d.why, summary)}
	}
	if err := k.writeIdle(ctx, j.kind, w, next, now, d.sshSeen); err != nil {
		log.Error(err, "Writing the Idle condition")
	}
}

func stateOf(s corev1.ConditionStatus) string {
	switch s {
	case corev1.ConditionTrue:
		return "idle"
	case corev1.ConditionFalse:
		return "active"
	}
	return "unknown"
}

// suspendPatch sets spec.suspend, the field the three kinds share.
var suspendPatch = client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":true}}`))

// suspend sets the workload's spec.suspend; its controller deletes its
// pods.
func (k *Keeper) suspend(ctx context.Context, w workload) error {
	return k.client.Patch(ctx, w.object(), suspendPatch)
}

// writeIdle writes the Idle condition through the status subresource,
// probed at now; its lastTransitionTime moves only when its status
// changes. A Notebook's status.ssh.lastSshClientActivity moves forward to
// sshSeen. On a conflict it reads the workload afresh and sets them again,
// leaving the rest of the status as it is.
func (k *Keeper) writeIdle(ctx context.Context, kd kind, w workload, next condition, now, sshSeen time.Time) error {
	key := client.ObjectKeyFromObject(w.object())
	first := true
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			fresh, err := kd.get(ctx, k.reader, key)
			if err != nil {
				return err
			}
			w = fresh
		}
		first = false
		c := next
		c.LastProbeTime = metav1.NewTime(now)
		w.setIdle(c, c.LastProbeTime)
		if r, ok := w.(sshRecorder); ok && !sshSeen.IsZero() {
			r.recordSSH(sshSeen)
		}
		err := k.client.Status().Update(ctx, w.object())
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}
