package workflow

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	"github.com/accelstack/accelstack/pkg/scheduler/queue"
	"github.com/accelstack/accelstack/pkg/workflow/rules"
)

// workObject is the object a Resource or T9k Job run creates, how it is
// reached and when it is done.
type workObject struct {
	obj *unstructured.Unstructured
	// c creates, reads and deletes it: the controller's own client for T9k
	// Jobs, one acting as the run's service account for Resource objects.
	c client.Client
	// watched is true for the T9k Jobs, whose changes wake the run; other
	// objects are polled.
	watched bool
	// success and failure say when it is done; nil never matches.
	success, failure *batchv1beta1.Rules
}

// runObject runs a Resource or T9k Job template: it creates the object once
// and follows it until it meets its success or failure rules.
func (r *Reconciler) runObject(ctx context.Context, run *batchv1beta1.WorkflowRun, spec *batchv1beta1.WorkflowTemplateSpec,
	typ batchv1beta1.WorkflowTemplateType, b *binding) (outcome, error) {
	w, err := r.object(run, spec, typ, b)
	if err != nil {
		return errorOutcome("%v", err), nil
	}
	what := fmt.Sprintf("%s %s", w.obj.GetKind(), w.obj.GetName())
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(w.obj.GroupVersionKind())
	err = w.c.Get(ctx, client.ObjectKeyFromObject(w.obj), cur)
	switch {
	case apierrors.IsNotFound(err) && run.Status.ResourceName != "":
		return outcome{phase: batchv1beta1.NodeFailed, message: what + " was deleted"}, nil
	case apierrors.IsNotFound(err):
		if err := w.c.Create(ctx, w.obj); err != nil && !apierrors.IsAlreadyExists(err) {
			if isRefusal(err) {
				return errorOutcome("creating %s: %v", what, err), nil
			}
			return outcome{}, fmt.Errorf("creating %s: %w", what, err)
		}
		run.Status.ResourceName = w.obj.GetName()
		return r.pollIfUnwatched(w, running(what+" created")), nil
	case isRefusal(err):
		return errorOutcome("reading %s: %v", what, err), nil
	case err != nil:
		return outcome{}, fmt.Errorf("reading %s: %w", what, err)
	}
	run.Status.ResourceName = w.obj.GetName()
	if !metav1.IsControlledBy(cur, run) {
		return errorOutcome("%s exists and is not this run's", what), nil
	}
	if w.failure != nil {
		ok, err := rules.Matches(cur.Object, w.failure)
		if err != nil {
			return errorOutcome("failureRules: %v", err), nil
		}
		if ok {
			return outcome{phase: batchv1beta1.NodeFailed, message: what + " met the failure rules"}, nil
		}
	}
	if w.success == nil && w.failure == nil {
		return outcome{phase: batchv1beta1.NodeSucceeded, message: what + " created; no rules to wait for"}, nil
	}
	if w.success != nil {
		ok, err := rules.Matches(cur.Object, w.success)
		if err != nil {
			return errorOutcome("successRules: %v", err), nil
		}
		if ok {
			return outcome{phase: batchv1beta1.NodeSucceeded, message: what + " met the success rules"}, nil
		}
	}
	return r.pollIfUnwatched(w, running(what+" is running")), nil
}

// pollIfUnwatched asks objects whose changes are not watched to be looked
// at again after the poll interval.
func (r *Reconciler) pollIfUnwatched(w *workObject, o outcome) outcome {
	if !w.watched {
		o.requeue = r.opts.PollInterval
	}
	return o
}

// isRefusal reports whether err is the API server refusing a request for
// good (invalid, forbidden, unknown kind) rather than failing for now.
func isRefusal(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsMethodNotSupported(err) || meta.IsNoMatchError(err)
}

// deleteObject deletes the object of a Resource or T9k Job run.
func (r *Reconciler) deleteObject(ctx context.Context, run *batchv1beta1.WorkflowRun, typ batchv1beta1.WorkflowTemplateType) error {
	spec := run.Status.WorkflowTemplateSpec
	if spec == nil {
		return nil
	}
	b, err := bind(run, spec)
	if err != nil {
		return err
	}
	w, err := r.object(run, spec, typ, b)
	if err != nil {
		return err
	}
	return client.IgnoreNotFound(w.c.Delete(ctx, w.obj, client.PropagationPolicy(metav1.DeletePropagationBackground)))
}

// object returns the object a Resource or T9k Job run creates, with the
// variables substituted, named, labelled and owned by the run.
func (r *Reconciler) object(run *batchv1beta1.WorkflowRun, spec *batchv1beta1.WorkflowTemplateSpec,
	typ batchv1beta1.WorkflowTemplateType, b *binding) (*workObject, error) {
	sfx := suffix(string(run.UID), strconv.Itoa(attempt(run)))
	w := &workObject{}
	if typ == batchv1beta1.WorkflowTemplateTypeResource {
		obj, err := ParseManifest(spec.Resource.Manifest)
		if err != nil {
			return nil, fmt.Errorf("spec.resource.manifest: %w", err)
		}
		tree, err := b.vars.budget(MaxSubstitutedObjectBytes).replaceTree(obj.Object, "spec.resource.manifest")
		if err != nil {
			return nil, err
		}
		obj.Object = tree.(map[string]any)
		if run.Spec.ServiceAccountName == "" {
			return nil, errors.New("spec.serviceAccountName is required to create a Resource template's object: it is created with that service account's permissions")
		}
		if w.c, err = r.as(run.Namespace, run.Spec.ServiceAccountName); err != nil {
			return nil, err
		}
		w.obj, w.success, w.failure = obj, spec.Resource.SuccessRules, spec.Resource.FailureRules
		success, failure, isJob := rules.ForT9kJob(obj.GroupVersionKind().GroupKind())
		if isJob && w.success == nil && w.failure == nil {
			w.success, w.failure = success, failure
		}
		w.watched = isJob
	} else {
		job := jobTemplate(spec)
		if err := b.vars.ReplaceAll(job, "spec."+jobField(typ)); err != nil {
			return nil, err
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(job)
		if err != nil {
			return nil, err
		}
		gvk, err := apiutil.GVKForObject(job, r.scheme)
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{Object: content}
		obj.SetGroupVersionKind(gvk)
		if s := run.Spec.Scheduler; s != nil {
			if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "scheduler"); !found {
				sched, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
				if err != nil {
					return nil, err
				}
				_ = unstructured.SetNestedMap(obj.Object, sched, "spec", "scheduler")
			}
		}
		jobQueue, _, _ := unstructured.NestedString(obj.Object, "spec", "scheduler", "t9kScheduler", "queue")
		obj.SetAnnotations(queue.CarryGrant(obj.GetAnnotations(), run, jobQueue))
		w.obj, w.c, w.watched = obj, r.client, true
		w.success, w.failure, _ = rules.ForT9kJob(gvk.GroupKind())
	}
	obj := w.obj
	if ns := obj.GetNamespace(); ns != "" && ns != run.Namespace {
		return nil, fmt.Errorf("the object is in namespace %s; a run creates objects in its own namespace, %s", ns, run.Namespace)
	}
	obj.SetNamespace(run.Namespace)
	switch {
	case obj.GetName() != "":
	case obj.GetGenerateName() != "":
		obj.SetName(childName(strings.TrimRight(obj.GetGenerateName(), "-"), sfx))
	default:
		obj.SetName(childName(run.Name, sfx))
	}
	obj.SetGenerateName("")
	obj.SetResourceVersion("")
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[batchv1beta1.WorkflowRunLabel] = labelValue(run.Name)
	obj.SetLabels(labels)
	t := true
	obj.SetOwnerReferences(append(obj.GetOwnerReferences(), metav1.OwnerReference{
		APIVersion: batchv1beta1.GroupVersion.String(), Kind: "WorkflowRun", Name: run.Name, UID: run.UID,
		Controller: &t, BlockOwnerDeletion: &t,
	}))
	delete(obj.Object, "status")
	return w, nil
}

// ParseManifest parses a Resource template's manifest, YAML or JSON, into
// an object with apiVersion, kind and metadata.
func ParseManifest(manifest string) (*unstructured.Unstructured, error) {
	var content map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &content); err != nil {
		return nil, fmt.Errorf("not a YAML or JSON object: %w", err)
	}
	obj := &unstructured.Unstructured{Object: content}
	if content == nil {
		return nil, errors.New("empty manifest")
	}
	if obj.GetAPIVersion() == batchv1beta1.GroupVersion.Group {
		// The seed's examples name the T9k Jobs' group without a version.
		obj.SetAPIVersion(batchv1beta1.GroupVersion.String())
	}
	gv, err := schema.ParseGroupVersion(obj.GetAPIVersion())
	switch {
	case obj.GetAPIVersion() == "":
		return nil, errors.New("apiVersion is required")
	case err != nil || gv.Version == "":
		return nil, fmt.Errorf("apiVersion %q is not <group>/<version> or <version>", obj.GetAPIVersion())
	case obj.GetKind() == "":
		return nil, errors.New("kind is required")
	}
	if _, ok := content["metadata"]; ok {
		if _, isMap := content["metadata"].(map[string]any); !isMap {
			return nil, errors.New("metadata is not an object")
		}
	}
	return obj, nil
}
