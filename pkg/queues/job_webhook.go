package queues

import (
	"context"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// JobPath is where the T9k Job admission webhook is served.
const JobPath = "/validate-queues-job"

// jobValidator refuses the creation of a T9k Job whose queue would not
// take all of its pods.
type jobValidator struct {
	admitter *admitter
	jobKinds map[schema.GroupKind]jobs.Kind
	decoder  admission.Decoder
}

// Handle asks the queue of spec.scheduler.t9kScheduler for the job's pods
// as the jobs engine would create them: for each replica type, replicas
// pods of its template's requests (a limit without a request requests the
// limit).
func (v *jobValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create {
		return admission.Allowed("")
	}
	kind, ok := v.jobKinds[schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}]
	if !ok {
		return admission.Allowed("not a T9k Job")
	}
	obj := kind.NewObject()
	if err := v.decoder.DecodeRaw(req.Object, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	job := kind.View(obj)
	s := job.Scheduler
	if s == nil || s.T9kScheduler == nil || s.T9kScheduler.Queue == "" {
		return admission.Allowed("")
	}
	if err := v.admitter.waitForCaches(ctx); err != nil {
		return admission.Errored(http.StatusServiceUnavailable, err)
	}
	r, err := v.admitter.admit(ctx, s.T9kScheduler.Queue, req.Namespace, jobPods(job), queue.Granted(obj, s.T9kScheduler.Queue), true)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if r != nil {
		return admission.Denied(r.Message)
	}
	return admission.Allowed("")
}

// jobPods returns the requests of each pod the job's replica types make.
func jobPods(job *jobs.Job) []corev1.ResourceList {
	var pods []corev1.ResourceList
	for _, r := range job.Replicas {
		req := queue.TemplateRequests(&r.Template.Spec)
		for range r.Replicas {
			pods = append(pods, req)
		}
	}
	return pods
}
