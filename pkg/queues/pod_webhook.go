package queues

import (
	"context"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// PodPath is where the pod admission webhook is served.
const PodPath = "/validate-queues-pod"

// podValidator refuses the creation of a T9k Scheduler pod its queue
// would not take.
type podValidator struct {
	admitter *admitter
	// jobKinds are the T9k Job kinds by group and kind, whose pods the
	// queue took with their job.
	jobKinds map[schema.GroupKind]jobs.Kind
	decoder  admission.Decoder
}

// Handle admits a pod of another scheduler or in no queue; otherwise it
// asks the pod's queue. A pod whose controlling owner is a T9k Job that
// exists and names the same queue is not checked against the quota: the
// job's pods were counted when the job was admitted, and a pod recreated
// by a restart must not be refused for the room its predecessor held.
func (v *podValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create {
		return admission.Allowed("")
	}
	pod := &corev1.Pod{}
	if err := v.decoder.DecodeRaw(req.Object, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if pod.Spec.SchedulerName != schedv1beta1.SchedulerName {
		return admission.Allowed("")
	}
	if err := v.admitter.waitForCaches(ctx); err != nil {
		return admission.Errored(http.StatusServiceUnavailable, err)
	}
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	m := queue.MembershipOf(pod, v.admitter.members.lookup(ctx))
	if m.Queue == "" {
		return admission.Allowed("the pod is in no queue")
	}
	withJob, err := v.admittedWithJob(ctx, pod, m.Queue)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	r, err := v.admitter.admit(ctx, m.Queue, pod.Namespace, []corev1.ResourceList{queue.PodRequests(pod)}, queue.Granted(pod, m.Queue), !withJob)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if r != nil {
		return admission.Denied(r.Message)
	}
	return admission.Allowed("")
}

// admittedWithJob reports whether pod's controlling owner is a T9k Job that
// exists (the owner reference's UID) and uses queue name.
func (v *podValidator) admittedWithJob(ctx context.Context, pod *corev1.Pod, name string) (bool, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return false, nil
	}
	// An unreadable apiVersion names no job kind.
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	kind, ok := v.jobKinds[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	if !ok {
		return false, nil
	}
	obj := kind.NewObject()
	if err := v.admitter.apiReader.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, obj); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if obj.GetUID() != ref.UID {
		return false, nil
	}
	s := kind.View(obj).Scheduler
	return s != nil && s.T9kScheduler != nil && s.T9kScheduler.Queue == name, nil
}
