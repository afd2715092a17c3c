// Package deepspeed is the DeepSpeedJob kind: every worker runs sshd with
// the job's key pair, and worker 0, once every worker's sshd answers, runs
// the deepspeed launcher (or the job's customCommand), which starts the
// ranks on every worker through pdsh with the job's hostfile and env file.
// Worker 0 decides the job.
package deepspeed

// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=deepspeedjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.tensorstack.dev,resources=deepspeedjobs/status,verbs=get;update;patch
