// Package sshjob holds what the launcher-and-sshd job kinds (MPIJob,
// DeepSpeedJob, ColossalAIJob) share: the job's SSH key pair in a Secret,
// its hostfile and SSH client configuration in a ConfigMap, the volumes that
// mount them, and the sshd command line of the workers.
//
// The private key lives only in the Secret and in the pods' volumes: it is
// never logged, put into an event or written into a status.
package sshjob
