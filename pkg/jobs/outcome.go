package jobs

import "fmt"

// LeaderOutcome is the outcome of the kinds where one replica leads: the job
// succeeds when the leader (replica typ, rank) succeeds, and fails when the
// leader or any other replica has failed for good.
func LeaderOutcome(job *Job, states *States, typ string, rank int32) Outcome {
	if l := states.Get(job.Object.GetName(), typ, rank); l != nil && l.State == Succeeded {
		return Succeed()
	}
	for _, rs := range states.All() {
		if rs.State != Failed {
			continue
		}
		o := Fail(fmt.Sprintf("The job failed: replica %s %s.", rs.Name, rs.Detail))
		if rs.Exhausted {
			o.Reason = ReasonBackoffLimit
		}
		return o
	}
	return Outcome{}
}
