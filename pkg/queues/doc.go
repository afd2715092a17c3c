// Package queues is the cluster side of the T9k Scheduler that runs in the
// controllers: the status of PodGroups and Queues, the deletion of pods that
// outlive their queue's maxDuration, and the validating admission webhook
// that refuses pods and T9k Jobs a queue would not take (missing or closed
// queue, namespace not allowed, a pod larger than every resource shape, the
// quota exceeded), with the refusal message of package
// pkg/scheduler/queue, the same rules the scheduler applies.
//
// The package watches only the pods of the T9k Scheduler (schedulerName
// t9k-scheduler), in a cache of its own selected by that field; a pod of
// another scheduler is in no queue whatever its labels.
package queues
