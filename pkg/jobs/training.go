package jobs

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
)

// DefaultBackoffLimit is the restart budget of a training job whose
// runPolicy.backoffLimit is unset.
const DefaultBackoffLimit = 3

// TrainingJob returns the view of a training job without its replicas: the
// run policy's budget, deadline and clean-up, and the status pointers.
func TrainingJob(obj client.Object, runMode *batchv1beta1.RunMode, policy *batchv1beta1.RunPolicy,
	scheduler *batchv1beta1.SchedulePolicy, status *batchv1beta1.TrainingJobStatus) *Job {
	limit := ptr.Deref(policy.BackoffLimit, DefaultBackoffLimit)
	return &Job{
		Object:                obj,
		RunMode:               runMode,
		CleanUpPolicy:         policy.CleanUpPolicy,
		Scheduler:             scheduler,
		BackoffLimit:          &limit,
		ActiveDeadlineSeconds: policy.ActiveDeadlineSeconds,
		Status:                &status.JobStatus,
		BackoffCount:          &status.BackoffCount,
	}
}

// TrainingReplica returns the view of one replica type of a training job,
// with a headless Service per replica exposing port portName.
func TrainingReplica(typ string, replicas *int32, policy batchv1beta1.ReplicaRestartPolicy,
	tmpl *corev1.PodTemplateSpec, main, portName string, defaultPort int32) Replica {
	if policy == "" {
		policy = batchv1beta1.ReplicaRestartOnFailure
	}
	n := ReplicaCount(replicas)
	port := ContainerPort(MainContainer(&tmpl.Spec, main), portName, defaultPort)
	return Replica{
		Type:          typ,
		Replicas:      n,
		Restart:       Restart{Policy: policy},
		Template:      tmpl,
		MainContainer: main,
		Service:       true,
		Ports:         []corev1.ServicePort{{Name: portName, Port: port}},
		RoleMin:       n,
	}
}

// ServicePort returns the port of replica r's Services.
func (r *Replica) ServicePort() int32 {
	if len(r.Ports) == 0 {
		return 0
	}
	return r.Ports[0].Port
}

// ValidateRunPolicy checks a training job's run policy.
func ValidateRunPolicy(p *batchv1beta1.RunPolicy) field.ErrorList {
	var errs field.ErrorList
	path := specPath.Child("runPolicy")
	if d := p.ActiveDeadlineSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(path.Child("activeDeadlineSeconds"), *d, "must be positive"))
	}
	if b := p.BackoffLimit; b != nil && *b < 0 {
		errs = append(errs, field.Invalid(path.Child("backoffLimit"), *b, "must not be negative"))
	}
	return errs
}

// ToJSON returns v as compact JSON; v must be encodable.
func ToJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps, slices and strings are encoded
	}
	return string(b)
}
