// Package jobs is the engine behind the T9k jobs (batch.tensorstack.dev):
// one generic reconciler that runs a job as replica pods named
// <job>-<type>-<rank>, with headless Services, a PodGroup for the T9k
// Scheduler, the Ascend rank-table ConfigMap, restarts under the shared
// restart budget, run modes (debug, pause and resume), clean-up, deadlines and
// the common status. It knows no job kind: each kind lives in a package of its
// own (genericjob, pytorch, tensorflow, xgboost, ascendjob, mpijob,
// deepspeed, colossalai) and plugs in through the Kind interface, supplying
// only what differs (its replicas, environment and command, and who decides
// the outcome) and its registration (package jobkind); package kinds lists
// them for the manager.
package jobs
