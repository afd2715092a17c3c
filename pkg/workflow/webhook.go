package workflow

import (
	"context"
	"encoding/json"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	triggersv1beta1 "github.com/accelstack/accelstack/api/tensorstack/triggers/v1beta1"
	"github.com/accelstack/accelstack/pkg/workflow/cron"
)

// The paths the workflow webhooks are served at, as
// deploy/controllers/workflows-webhook.yaml names them.
const (
	TemplateWebhookPath = "/validate-batch-tensorstack-dev-v1beta1-workflowtemplate"
	RunWebhookPath      = "/validate-batch-tensorstack-dev-v1beta1-workflowrun"
	CronWebhookPath     = "/validate-batch-tensorstack-dev-v1beta1-cronworkflowrun"
	TriggerWebhookPath  = "/validate-tensorstack-dev-v1beta1-workflowtrigger"
)

// webhook admits the workflow objects a Validator accepts.
type webhook struct {
	v       *Validator
	decoder admission.Decoder
	// check validates one decoded object of its kind and the raw JSON of
	// its spec.
	check func(ctx context.Context, v *Validator, req admission.Request, d admission.Decoder) (string, field.ErrorList, error)
	gk    schema.GroupKind
}

// Handle refuses a created or updated object the validator finds fault
// with, naming the fields.
func (w *webhook) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	name, errs, err := w.check(ctx, w.v, req, w.decoder)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if len(errs) == 0 {
		return admission.Allowed("")
	}
	status := apierrors.NewInvalid(w.gk, name, errs).Status()
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

// rawSpec returns the JSON of an object's spec, or of a field within it.
func rawSpec(raw []byte, fields ...string) json.RawMessage {
	var cur json.RawMessage = raw
	for _, f := range append([]string{"spec"}, fields...) {
		var m map[string]json.RawMessage
		if json.Unmarshal(cur, &m) != nil {
			return nil
		}
		cur = m[f]
	}
	return cur
}

func checkTemplate(ctx context.Context, v *Validator, req admission.Request, d admission.Decoder) (string, field.ErrorList, error) {
	wt := &batchv1beta1.WorkflowTemplate{}
	if err := d.DecodeRaw(req.Object, wt); err != nil {
		return "", nil, err
	}
	p := field.NewPath("spec")
	errs := StrictTemplateSpec(rawSpec(req.Object.Raw), p)
	errs = append(errs, v.TemplateSpec(ctx, wt.Namespace, &wt.Spec, p)...)
	return wt.Name, errs, nil
}

func checkRun(ctx context.Context, v *Validator, req admission.Request, d admission.Decoder) (string, field.ErrorList, error) {
	wr := &batchv1beta1.WorkflowRun{}
	if err := d.DecodeRaw(req.Object, wr); err != nil {
		return "", nil, err
	}
	if req.Operation == admissionv1.Update {
		// The spec of a run that has started is what it runs; only
		// creation is checked against the templates.
		return wr.Name, nil, nil
	}
	p := field.NewPath("spec")
	errs := StrictTemplateSpec(rawSpec(req.Object.Raw, "workflowTemplateSpec"), p.Child("workflowTemplateSpec"))
	errs = append(errs, v.RunSpec(ctx, wr.Namespace, &wr.Spec, p)...)
	return wr.Name, errs, nil
}

func checkCron(ctx context.Context, v *Validator, req admission.Request, d admission.Decoder) (string, field.ErrorList, error) {
	c := &batchv1beta1.CronWorkflowRun{}
	if err := d.DecodeRaw(req.Object, c); err != nil {
		return "", nil, err
	}
	p := field.NewPath("spec", "workflowRun", "spec")
	errs := cron.Validate(c)
	errs = append(errs, StrictTemplateSpec(rawSpec(req.Object.Raw, "workflowRun", "spec", "workflowTemplateSpec"), p.Child("workflowTemplateSpec"))...)
	errs = append(errs, v.RunSpec(ctx, c.Namespace, &c.Spec.WorkflowRun.Spec, p)...)
	return c.Name, errs, nil
}

// checkTrigger checks a WorkflowTrigger: its sources and filters with the
// validator's TriggerRules, and the run it starts as a run is checked.
func checkTrigger(ctx context.Context, v *Validator, req admission.Request, d admission.Decoder) (string, field.ErrorList, error) {
	wt := &triggersv1beta1.WorkflowTrigger{}
	if err := d.DecodeRaw(req.Object, wt); err != nil {
		return "", nil, err
	}
	var errs field.ErrorList
	if v.TriggerRules != nil {
		errs = v.TriggerRules(wt)
	}
	p := field.NewPath("spec", "workflowRunSpec")
	errs = append(errs, StrictTemplateSpec(rawSpec(req.Object.Raw, "workflowRunSpec", "workflowTemplateSpec"), p.Child("workflowTemplateSpec"))...)
	errs = append(errs, v.RunSpec(ctx, wt.Namespace, &wt.Spec.WorkflowRunSpec, p)...)
	return wt.Name, errs, nil
}
