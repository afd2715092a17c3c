package queues

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/gang"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// Messages of the PodGroup conditions.
const (
	// MessageGroupScheduled is the seed's message of GroupScheduled=True.
	MessageGroupScheduled = "Resources have been allocated to PodGroup"
	// MessageSufficientMembers is the message of SufficientGroupMember=True.
	MessageSufficientMembers = "The PodGroup has the pods its minMember and roles ask for"
)

// groupStatus returns the status of pg given its pods, keeping the
// transition times of the conditions that did not change; now stamps those
// that did.
//
// The counts are by phase over every pod of the group; allocated sums the
// requests of the pods that hold resources (bound, not finished, not being
// deleted). SufficientGroupMember counts the pods that are neither finished
// nor being deleted, in all and per role, against minMember and roles.
// GroupScheduled turns True once minMember pods (at least one) are bound to
// nodes, finished ones included; once True it stays True while any pod of
// the group is still bound, so a member that finishes or is recreated does
// not unschedule the group, and it returns to False (PodGroupPending) only
// when no pod of the group is bound any more, e.g. after the whole gang was
// preempted.
func groupStatus(pg *schedv1beta1.PodGroup, pods []*corev1.Pod, now metav1.Time) schedv1beta1.PodGroupStatus {
	st := schedv1beta1.PodGroupStatus{
		Allocated:  allocated(pods),
		PodCounts:  countPhases(pods),
		Conditions: append([]schedv1beta1.PodGroupCondition(nil), pg.Status.Conditions...),
	}
	var live gang.Count
	bound := 0
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Spec.NodeName != "" {
			bound++
		}
		if !queue.Finished(p) {
			live.Add(p.Labels[schedv1beta1.RoleLabel])
		}
	}

	if short := gang.Shortfall(&pg.Spec, live); short == "" {
		st.Conditions = setGroupCondition(st.Conditions, schedv1beta1.PodGroupCondition{
			Type: schedv1beta1.PodGroupSufficientMember, Status: metav1.ConditionTrue,
			Reason: schedv1beta1.ReasonSufficientMemberPods, Message: MessageSufficientMembers,
		}, now)
	} else {
		st.Conditions = setGroupCondition(st.Conditions, schedv1beta1.PodGroupCondition{
			Type: schedv1beta1.PodGroupSufficientMember, Status: metav1.ConditionFalse,
			Reason: schedv1beta1.ReasonInsufficientMemberPods, Message: "The PodGroup has " + short,
		}, now)
	}

	need := max(int(pg.Spec.MinMember), 1)
	wasScheduled := groupCondition(pg.Status.Conditions, schedv1beta1.PodGroupScheduled) == metav1.ConditionTrue
	if bound >= need || (wasScheduled && bound > 0) {
		st.Conditions = setGroupCondition(st.Conditions, schedv1beta1.PodGroupCondition{
			Type: schedv1beta1.PodGroupScheduled, Status: metav1.ConditionTrue,
			Reason: schedv1beta1.ReasonPodGroupScheduled, Message: MessageGroupScheduled,
		}, now)
	} else {
		st.Conditions = setGroupCondition(st.Conditions, schedv1beta1.PodGroupCondition{
			Type: schedv1beta1.PodGroupScheduled, Status: metav1.ConditionFalse,
			Reason: schedv1beta1.ReasonPodGroupPending, Message: fmt.Sprintf("%d of minMember %d pods are bound to nodes", bound, need),
		}, now)
	}
	return st
}

// groupCondition returns the status of condition typ, "" when absent.
func groupCondition(conds []schedv1beta1.PodGroupCondition, typ string) metav1.ConditionStatus {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// setGroupCondition sets c in conds, stamping it with now when its status
// changed and keeping the old transition time (and transitionID) otherwise.
func setGroupCondition(conds []schedv1beta1.PodGroupCondition, c schedv1beta1.PodGroupCondition, now metav1.Time) []schedv1beta1.PodGroupCondition {
	for i := range conds {
		if conds[i].Type != c.Type {
			continue
		}
		if conds[i].Status == c.Status {
			c.LastTransitionTime, c.TransitionID = conds[i].LastTransitionTime, conds[i].TransitionID
		} else {
			c.LastTransitionTime = now
		}
		conds[i] = c
		return conds
	}
	c.LastTransitionTime = now
	return append(conds, c)
}
