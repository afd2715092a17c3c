package notebook

import (
	"context"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// WebhookPath is where the Notebook webhook is served, as
// deploy/controllers/notebooks-webhook.yaml names it.
const WebhookPath = "/validate-tensorstack-dev-v1beta1-notebook"

// webhook admits the Notebooks ValidateSpec finds no fault with and whose
// SSH key Secrets, those that exist, are SSH Public Key Secrets.
type webhook struct {
	decoder admission.Decoder
	// secrets reads the Secrets authorized_keys names; nil skips them.
	secrets client.Reader
}

// Handle refuses a created or updated Notebook whose spec cannot run,
// naming the fields.
func (w *webhook) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	nb := &tensorstackv1beta1.Notebook{}
	if err := w.decoder.DecodeRaw(req.Object, nb); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	errs := append(ValidateSpec(nb), w.keySecrets(ctx, nb)...)
	if req.Operation == admissionv1.Update && len(errs) > 0 {
		// Faults the Notebook had before are not refused again, so that
		// a Notebook admitted under older rules can still be suspended.
		old := &tensorstackv1beta1.Notebook{}
		if err := w.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		errs = newErrors(errs, append(ValidateSpec(old), w.keySecrets(ctx, old)...))
	}
	if len(errs) == 0 {
		return admission.Allowed("")
	}
	status := apierrors.NewInvalid(tensorstackv1beta1.GroupVersion.WithKind("Notebook").GroupKind(), nb.Name, errs).Status()
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

// keySecrets refuses the Secrets of spec.ssh.authorized_keys that exist and
// are not SSH Public Key Secrets; a Secret not there yet is left to the
// controller, which reports it in the SSHReady condition until it appears.
func (w *webhook) keySecrets(ctx context.Context, nb *tensorstackv1beta1.Notebook) field.ErrorList {
	if w.secrets == nil || nb.Spec.SSH == nil || !nb.Spec.SSH.Enabled {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("spec", "ssh", "authorized_keys")
	for i, name := range nb.Spec.SSH.AuthorizedKeys {
		secret := &corev1.Secret{}
		err := w.secrets.Get(ctx, client.ObjectKey{Namespace: nb.Namespace, Name: name}, secret)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, field.InternalError(p.Index(i), err))
		default:
			if msg := checkKeySecret(secret); msg != "" {
				errs = append(errs, field.Invalid(p.Index(i), name, msg))
			}
		}
	}
	return errs
}

// newErrors returns the errors of errs that are not in old, by field,
// type and value.
func newErrors(errs, old field.ErrorList) field.ErrorList {
	had := map[string]bool{}
	for _, e := range old {
		had[e.Error()] = true
	}
	var out field.ErrorList
	for _, e := range errs {
		if !had[e.Error()] {
			out = append(out, e)
		}
	}
	return out
}
