package project

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// WebhookPath is where the Project and QuotaProfile webhook is served, as
// deploy/controllers/projects-webhook.yaml names it.
const WebhookPath = "/validate-tensorstack-dev-v1beta1-project"

// webhook refuses Projects and QuotaProfiles that cannot be applied, naming
// the field.
type webhook struct {
	decoder admission.Decoder
	// reader reads namespaces from the API server.
	reader client.Reader
	// writer dry-runs the quota and policy templates.
	writer client.Writer
	// validationNamespace is where the templates are dry-run.
	validationNamespace string
}

// Handle refuses a created or updated Project or QuotaProfile with a
// fault, naming the fields.
func (w *webhook) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	var (
		errs field.ErrorList
		gk   = tensorstackv1beta1.GroupVersion.WithKind(req.Kind.Kind).GroupKind()
	)
	switch req.Kind.Kind {
	case "Project":
		p := &tensorstackv1beta1.Project{}
		if err := w.decoder.DecodeRaw(req.Object, p); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		errs = w.validateProject(ctx, p, req.Operation == admissionv1.Create)
	case "QuotaProfile":
		qp := &tensorstackv1beta1.QuotaProfile{}
		if err := w.decoder.DecodeRaw(req.Object, qp); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		errs = w.dryRunQuota(ctx, field.NewPath("spec"), &qp.Spec)
	default:
		return admission.Allowed("")
	}
	if len(errs) == 0 {
		return admission.Allowed("")
	}
	status := apierrors.NewInvalid(gk, req.Name, errs).Status()
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

// validateProject returns the faults of p; created says whether p is new,
// when its namespace must be free or already the Project's.
func (w *webhook) validateProject(ctx context.Context, p *tensorstackv1beta1.Project, created bool) field.ErrorList {
	var errs field.ErrorList
	name := field.NewPath("metadata", "name")
	if msgs := validation.IsDNS1123Label(p.Name); len(msgs) > 0 {
		errs = append(errs, field.Invalid(name, p.Name, "must be a valid namespace name: "+strings.Join(msgs, "; ")))
	} else if created {
		ns := &corev1.Namespace{}
		err := w.reader.Get(ctx, client.ObjectKey{Name: p.Name}, ns)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, field.InternalError(name, fmt.Errorf("reading namespace %s: %w", p.Name, err)))
		case !ownedBy(ns, p.Name):
			errs = append(errs, field.Forbidden(name, fmt.Sprintf("namespace %s exists and is not a Project's; a Project does not take over a namespace", p.Name)))
		}
	}
	spec := field.NewPath("spec")
	hasTemplate := p.Spec.ResourceQuota != nil && p.Spec.ResourceQuota.Template != nil
	if p.Spec.QuotaProfile != "" && hasTemplate {
		errs = append(errs, field.Forbidden(spec.Child("quotaProfile"), "spec.quotaProfile and spec.resourceQuota.template are mutually exclusive: set one"))
	}
	if hasTemplate {
		errs = append(errs, w.dryRunQuota(ctx, spec.Child("resourceQuota", "template", "spec"), &p.Spec.ResourceQuota.Template.Spec)...)
	}
	if np := p.Spec.NetworkPolicy; np != nil && np.Template != nil {
		obj := &networkingv1.NetworkPolicy{Spec: *np.Template.Spec.DeepCopy()}
		errs = append(errs, w.dryRun(ctx, spec.Child("networkPolicy", "template", "spec"), obj)...)
	}
	return errs
}

// dryRunQuota has the API server validate a ResourceQuota of spec.
func (w *webhook) dryRunQuota(ctx context.Context, path *field.Path, spec *corev1.ResourceQuotaSpec) field.ErrorList {
	return w.dryRun(ctx, path, &corev1.ResourceQuota{Spec: *spec.DeepCopy()})
}

// dryRun creates obj in the validation namespace without persisting it, so
// that the API server's own validation judges its spec, and returns the
// faults found under path.
func (w *webhook) dryRun(ctx context.Context, path *field.Path, obj client.Object) field.ErrorList {
	obj.SetNamespace(w.validationNamespace)
	obj.SetName("project-template-validation")
	err := w.writer.Create(ctx, obj, client.DryRunAll)
	var status apierrors.APIStatus
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		return nil
	case apierrors.IsInvalid(err) && errors.As(err, &status) && status.Status().Details != nil:
		var errs field.ErrorList
		for _, c := range status.Status().Details.Causes {
			f := strings.TrimPrefix(c.Field, "spec.")
			if f == "spec" {
				f = ""
			}
			p := path
			if f != "" {
				p = field.NewPath(path.String() + "." + f)
			}
			errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: p.String(), BadValue: field.OmitValueType{}, Detail: c.Message})
		}
		return errs
	}
	return field.ErrorList{field.InternalError(path, fmt.Errorf("validating with the API server: %w", err))}
}
