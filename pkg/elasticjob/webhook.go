package elasticjob

import (
	"context"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
)

// ValidatePath is the path the validating webhook of kind is served at, as
// deploy/controllers/elasticjob-webhook.yaml names it.
func ValidatePath(kind string) string {
	gv := elasticv1alpha1.GroupVersion
	return "/validate-" + strings.ReplaceAll(gv.Group, ".", "-") + "-" + gv.Version + "-" + strings.ToLower(kind)
}

// jobValidator refuses ElasticJobs ValidateElasticJob finds fault with.
type jobValidator struct {
	decoder admission.Decoder
}

// Handle refuses a created or updated ElasticJob that cannot run, naming
// the fields.
func (v *jobValidator) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	job := &elasticv1alpha1.ElasticJob{}
	if err := v.decoder.DecodeRaw(req.Object, job); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	return verdict("ElasticJob", job.Name, ValidateElasticJob(job))
}

// planValidator refuses ScalePlans ValidateScalePlan finds fault with,
// reading the owner job.
type planValidator struct {
	decoder admission.Decoder
	reader  client.Reader
}

// Handle refuses a created or updated ScalePlan that cannot run, naming the
// fields.
func (v *planValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	plan := &elasticv1alpha1.ScalePlan{}
	if err := v.decoder.DecodeRaw(req.Object, plan); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var job *elasticv1alpha1.ElasticJob
	if owner := PlanOwner(plan); owner != "" {
		job = &elasticv1alpha1.ElasticJob{}
		if err := v.reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: owner}, job); err != nil {
			if !apierrors.IsNotFound(err) {
				return admission.Errored(http.StatusInternalServerError, err)
			}
			job = nil
		}
	}
	return verdict("ScalePlan", plan.Name, ValidateScalePlan(plan, job))
}

// verdict allows an object without errs and refuses it with them.
func verdict(kind, name string, errs field.ErrorList) admission.Response {
	if len(errs) == 0 {
		return admission.Allowed("")
	}
	status := apierrors.NewInvalid(schema.GroupKind{Group: elasticv1alpha1.GroupVersion.Group, Kind: kind}, name, errs).Status()
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}
