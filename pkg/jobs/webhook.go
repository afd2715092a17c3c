package jobs

import (
	"context"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// ValidatePath returns the path the validating webhook of a kind is served
// at, as deploy/controllers names it.
func ValidatePath(gvk schema.GroupVersionKind) string {
	return "/validate-" + strings.ReplaceAll(gvk.Group, ".", "-") + "-" + gvk.Version + "-" + strings.ToLower(gvk.Kind)
}

// validator admits the jobs of one kind that Kind.Validate accepts.
type validator struct {
	kind    Kind
	gk      schema.GroupKind
	decoder admission.Decoder
}

// Handle refuses a created or updated job that cannot run, naming the
// fields.
func (v *validator) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	obj := v.kind.NewObject()
	if err := v.decoder.DecodeRaw(req.Object, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var old client.Object
	if req.Operation == admissionv1.Update {
		old = v.kind.NewObject()
		if err := v.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	errs := v.kind.Validate(obj, old)
	if len(errs) == 0 {
		return admission.Allowed("")
	}
	return invalid(v.gk, obj.GetName(), errs)
}

// invalid is the admission response refusing an object with errs.
func invalid(gk schema.GroupKind, name string, errs field.ErrorList) admission.Response {
	status := apierrors.NewInvalid(gk, name, errs).Status()
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

// newValidatingWebhook returns the validating webhook of kind.
func newValidatingWebhook(kind Kind, gk schema.GroupKind, scheme *runtime.Scheme) *admission.Webhook {
	return &admission.Webhook{Handler: &validator{kind: kind, gk: gk, decoder: admission.NewDecoder(scheme)}}
}
