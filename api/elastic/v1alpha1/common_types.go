package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReplicaType names a kind of pod of an ElasticJob; the keys of
// spec.replicaSpecs and of a ScalePlan's replicaResourceSpecs.
type ReplicaType string

const (
	// ReplicaTypePS is a TensorFlow parameter server.
	ReplicaTypePS ReplicaType = "ps"
	// ReplicaTypeWorker is a training worker.
	ReplicaTypeWorker ReplicaType = "worker"
	// ReplicaTypeChief is the chief worker of a TensorFlow PS job.
	ReplicaTypeChief ReplicaType = "chief"
	// ReplicaTypeEvaluator is a TensorFlow evaluator.
	ReplicaTypeEvaluator ReplicaType = "evaluator"
	// ReplicaTypeMaster is DLRover's job master.
	ReplicaTypeMaster ReplicaType = "dlrover-master"
)

// TaskTypes are the replica types whose pods the controller creates from
// replica specs and ScalePlans, in the order it handles them.
var TaskTypes = []ReplicaType{ReplicaTypeChief, ReplicaTypePS, ReplicaTypeWorker, ReplicaTypeEvaluator}

// IsKnown reports whether t is a task type or the master.
func (t ReplicaType) IsKnown() bool {
	if t == ReplicaTypeMaster {
		return true
	}
	for _, k := range TaskTypes {
		if t == k {
			return true
		}
	}
	return false
}

// RestartPolicy is the restart policy DLRover declares on a replica spec.
type RestartPolicy string

const (
	// RestartPolicyAlways restarts always.
	RestartPolicyAlways RestartPolicy = "Always"
	// RestartPolicyOnFailure restarts on failure.
	RestartPolicyOnFailure RestartPolicy = "OnFailure"
	// RestartPolicyNever never restarts.
	RestartPolicyNever RestartPolicy = "Never"
	// RestartPolicyExitCode restarts on retryable exit codes.
	RestartPolicyExitCode RestartPolicy = "ExitCode"
)

// JobConditionType is a condition, and phase, of an ElasticJob or ScalePlan.
type JobConditionType string

const (
	// JobCreated means the controller has accepted the job.
	JobCreated JobConditionType = "Created"
	// JobPending means the job's pods are not running yet.
	JobPending JobConditionType = "Pending"
	// JobRunning means the job is running.
	JobRunning JobConditionType = "Running"
	// JobRestarting is declared by DLRover and never set.
	JobRestarting JobConditionType = "Restarting"
	// JobSucceeded means the job completed.
	JobSucceeded JobConditionType = "Succeeded"
	// JobFailed means the job failed.
	JobFailed JobConditionType = "Failed"
	// JobScaling means a ScalePlan is being executed.
	JobScaling JobConditionType = "Scaling"
)

// JobStatus is DLRover's copy of Kubeflow's common job status.
type JobStatus struct {
	// conditions are the observed conditions of the job, newest last.
	// +optional
	Conditions []JobCondition `json:"conditions"`

	// replicaStatuses counts the pods of each replica type by phase.
	// +optional
	ReplicaStatuses map[ReplicaType]*ReplicaStatus `json:"replicaStatuses"`

	// startTime is when the controller accepted the job.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the job succeeded or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// lastReconcileTime is when the job was last reconciled.
	// +optional
	LastReconcileTime *metav1.Time `json:"lastReconcileTime,omitempty"`
}

// ReplicaStatus counts the pods of one replica type.
type ReplicaStatus struct {
	// initial is the number of replicas the first ScalePlan asked for.
	// +optional
	Initial int32 `json:"initial,omitempty"`
	// pending is the number of Pending pods.
	// +optional
	Pending int32 `json:"pending,omitempty"`
	// active is the number of Running pods.
	// +optional
	Active int32 `json:"active,omitempty"`
	// succeeded is the number of Succeeded pods.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// failed is the number of Failed pods.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// labelSelector selects the pods of the type.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// CommonReplicaSpec is DLRover's copy of Kubeflow's common replica spec,
// inlined into ReplicaSpec.
type CommonReplicaSpec struct {
	// replicas is the desired number of pods of the type when the job
	// starts; ScalePlans change it later.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas int32 `json:"replicas,omitempty"`

	// template is the pod template of the type; the controller sets the
	// resources (from a ScalePlan) and the environment of containers[0].
	// +optional
	Template corev1.PodTemplateSpec `json:"template,omitempty"`

	// restartPolicy is declared for compatibility; pods follow
	// template.spec.restartPolicy and the controller relaunches failed pods.
	// +optional
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`
}

// JobCondition is one condition of an ElasticJob.
type JobCondition struct {
	// type of the condition.
	Type JobConditionType `json:"type"`
	// status of the condition: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// reason is a CamelCase word for the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message explains the last transition.
	// +optional
	Message string `json:"message,omitempty"`
	// lastUpdateTime is when the condition was last written.
	// +optional
	LastUpdateTime metav1.Time `json:"lastUpdateTime,omitempty"`
	// lastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}
