package interactive

import (
	"context"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Validator admits the objects of one kind that Check finds no fault with.
type Validator struct {
	Decoder admission.Decoder
	// GroupKind names the kind in refusals.
	GroupKind schema.GroupKind
	// New returns an empty object of the kind.
	New func() client.Object
	// Check validates obj; old is the object before an update, nil on a
	// create.
	Check func(obj, old client.Object) field.ErrorList
}

// Handle refuses a created or updated object Check finds fault with,
// naming the fields.
func (v *Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	obj := v.New()
	if err := v.Decoder.DecodeRaw(req.Object, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var old client.Object
	if req.Operation == admissionv1.Update {
		old = v.New()
		if err := v.Decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	errs := v.Check(obj, old)
	if len(errs) == 0 {
		return admission.Allowed("")
	}
	status := apierrors.NewInvalid(v.GroupKind, obj.GetName(), errs).Status()
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}
