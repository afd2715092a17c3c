package queues

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	schedv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
)

// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// GrantPath is where the queue grant webhook is served.
const GrantPath = "/mutate-queues-grant"

// grantMarker marks a new workload or pod with its queue's grant
// (schedv1beta1.QueueGrantAnnotation) when the queue's namespaceSelector
// does not admit its namespace but its creator holds the use of the queue
// (schedv1beta1.UseVerb, asked by a SubjectAccessReview). The queue's
// admission and the scheduler then take the grant in place of the
// namespace; the admission policy queue-grant refuses the mark to anyone
// without the grant, so a mark this webhook did not write still means one.
type grantMarker struct {
	admitter *admitter
	// jobKinds are the T9k Job kinds by group and kind, read through their
	// View; the other workloads name their queue at
	// spec.scheduler.t9kScheduler.queue (a CronWorkflowRun in its
	// spec.workflowRun).
	jobKinds map[schema.GroupKind]jobs.Kind
	// reviews creates SubjectAccessReviews.
	reviews client.Client
	decoder admission.Decoder
}

// Handle marks the object or leaves it as it is; it never refuses (the
// queue's validating webhook and policy do).
func (g *grantMarker) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create {
		return admission.Allowed("")
	}
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(req.Object.Raw, &obj.Object); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if _, marked := obj.GetAnnotations()[schedv1beta1.QueueGrantAnnotation]; marked {
		return admission.Allowed("already marked")
	}
	if err := g.admitter.waitForCaches(ctx); err != nil {
		return admission.Errored(http.StatusServiceUnavailable, err)
	}
	name, err := g.queueOf(ctx, req, obj)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if name == "" {
		return admission.Allowed("in no queue")
	}
	need, err := g.needsGrant(ctx, name, req.Namespace)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if !need {
		return admission.Allowed("")
	}
	ok, err := g.holdsGrant(ctx, req.UserInfo, name)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if !ok {
		return admission.Allowed("no grant")
	}
	return admission.Patched("marked with the creator's grant", grantPatch(obj, name))
}

// grantPatch is the JSON patch adding the grant of queue name to obj's
// annotations: only that, so that nothing else of the object is rewritten.
func grantPatch(obj *unstructured.Unstructured, name string) jsonpatch.JsonPatchOperation {
	if obj.GetAnnotations() == nil {
		return jsonpatch.NewOperation("add", "/metadata/annotations", map[string]string{schedv1beta1.QueueGrantAnnotation: name})
	}
	key := strings.NewReplacer("~", "~0", "/", "~1").Replace(schedv1beta1.QueueGrantAnnotation)
	return jsonpatch.NewOperation("add", "/metadata/annotations/"+key, name)
}

// queueOf returns the queue obj asks for, "" when none.
func (g *grantMarker) queueOf(ctx context.Context, req admission.Request, obj *unstructured.Unstructured) (string, error) {
	gk := schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}
	if gk == (schema.GroupKind{Kind: "Pod"}) {
		pod := &corev1.Pod{}
		if err := g.decoder.DecodeRaw(req.Object, pod); err != nil {
			return "", err
		}
		if pod.Spec.SchedulerName != schedv1beta1.SchedulerName {
			return "", nil
		}
		pod.Namespace = req.Namespace
		return queue.MembershipOf(pod, g.admitter.members.lookup(ctx)).Queue, nil
	}
	if kind, ok := g.jobKinds[gk]; ok {
		typed := kind.NewObject()
		if err := g.decoder.DecodeRaw(req.Object, typed); err != nil {
			return "", err
		}
		if s := kind.View(typed).Scheduler; s != nil && s.T9kScheduler != nil {
			return s.T9kScheduler.Queue, nil
		}
		return "", nil
	}
	path := []string{"spec", "scheduler", "t9kScheduler", "queue"}
	if gk.Kind == "CronWorkflowRun" {
		path = append([]string{"spec", "workflowRun"}, path...)
	}
	name, _, err := unstructured.NestedString(obj.Object, path...)
	if err != nil {
		return "", fmt.Errorf("%s: %w", strings.Join(path, "."), err)
	}
	return name, nil
}

// needsGrant reports whether queue name exists and its namespaceSelector
// does not admit namespace: only then does a grant change the answer.
func (g *grantMarker) needsGrant(ctx context.Context, name, namespace string) (bool, error) {
	q := &schedv1beta1.Queue{}
	if err := g.admitter.client.Get(ctx, client.ObjectKey{Name: name}, q); apierrors.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("getting Queue %s: %w", name, err)
	}
	ns := &corev1.Namespace{}
	if err := g.admitter.apiReader.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return false, fmt.Errorf("getting Namespace %s: %w", namespace, err)
	}
	return !queue.AdmitsNamespace(q, ns), nil
}

// holdsGrant asks the API server whether user may use queue name.
func (g *grantMarker) holdsGrant(ctx context.Context, user authenticationv1.UserInfo, name string) (bool, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, Groups: user.Groups, UID: user.UID, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: schedv1beta1.GroupVersion.Group, Resource: "queues", Name: name, Verb: schedv1beta1.UseVerb,
		},
	}}
	if err := g.reviews.Create(ctx, sar); err != nil {
		return false, fmt.Errorf("asking whether %s may use queue %s: %w", user.Username, name, err)
	}
	return sar.Status.Allowed, nil
}
