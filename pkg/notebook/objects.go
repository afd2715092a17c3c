package notebook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/accelstack/accelstack/pkg/interactive"
)

// SpecHashAnnotationKey is the annotation, on a StatefulSet or Service,
// holding a hash of the spec the controller last wrote: the controller
// rewrites the spec only when the hash of the one it wants differs, and so
// leaves alone the fields the API server defaults.
const SpecHashAnnotationKey = "tensorstack.dev/spec-hash"

// errStale is a create that found the name taken by the Notebook's own
// object, which the cache has not seen yet; interactive's, which the
// access objects' writer returns.
var errStale = interactive.ErrStale

// errNotOwned is an object of the wanted name that is not the Notebook's.
var errNotOwned = errors.New("exists and is not the Notebook's")

// objectWriter creates and updates the objects of Notebooks.
type objectWriter struct {
	client client.Client
	// reader is the controller's cache; apiReader the API server, read
	// when a create finds the name taken.
	reader, apiReader client.Reader
	scheme            *runtime.Scheme
}

// ensureStatefulSet creates want, controlled by owner, or updates the
// labels, replicas and pod template of the one there when its spec hash
// differs. It returns the StatefulSet and whether it created it.
func (w objectWriter) ensureStatefulSet(ctx context.Context, owner client.Object, want *appsv1.StatefulSet) (*appsv1.StatefulSet, bool, error) {
	got := &appsv1.StatefulSet{}
	created, changed, err := w.ensure(ctx, owner, want, want.Spec, got, "StatefulSet")
	if err != nil || created {
		return want, created, err
	}
	if changed {
		got = got.DeepCopy()
		got.Labels, got.Annotations = want.Labels, mergeAnnotations(got.Annotations, want.Annotations)
		got.Spec.Replicas, got.Spec.Template = want.Spec.Replicas, want.Spec.Template
		if err := w.client.Update(ctx, got); err != nil {
			return nil, false, fmt.Errorf("updating StatefulSet %s: %w", want.Name, err)
		}
	}
	return got, false, nil
}

// ensureService creates want, controlled by owner, or updates the labels,
// type, ports and selector of the one there when its spec hash differs.
// It returns the Service and whether it created it.
func (w objectWriter) ensureService(ctx context.Context, owner client.Object, want *corev1.Service) (*corev1.Service, bool, error) {
	got := &corev1.Service{}
	created, changed, err := w.ensure(ctx, owner, want, want.Spec, got, "Service")
	if err != nil || created {
		return want, created, err
	}
	if changed {
		got = got.DeepCopy()
		got.Labels, got.Annotations = want.Labels, mergeAnnotations(got.Annotations, want.Annotations)
		got.Spec.Type, got.Spec.Ports, got.Spec.Selector = want.Spec.Type, want.Spec.Ports, want.Spec.Selector
		if err := w.client.Update(ctx, got); err != nil {
			return nil, false, fmt.Errorf("updating Service %s: %w", want.Name, err)
		}
	}
	return got, false, nil
}

// deleteService deletes the Service name of namespace when owner controls
// it, and reports whether it did.
func (w objectWriter) deleteService(ctx context.Context, owner client.Object, namespace, name string) (bool, error) {
	svc := &corev1.Service{}
	if err := w.reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, svc); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(svc, owner) {
		return false, nil
	}
	if err := w.client.Delete(ctx, svc, client.Preconditions{UID: &svc.UID}); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return true, nil
}

// ensure sets the spec hash of want, then reads the object of its name
// into got: when there is none it creates want, controlled by owner
// (created); when there is one of owner's it reports whether its hash
// differs (changed).
func (w objectWriter) ensure(ctx context.Context, owner, want client.Object, spec any, got client.Object, kind string) (created, changed bool, err error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return false, false, fmt.Errorf("hashing the spec of %s %s: %w", kind, want.GetName(), err)
	}
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])[:16]
	want.SetAnnotations(mergeAnnotations(want.GetAnnotations(), map[string]string{SpecHashAnnotationKey: hash}))

	err = w.reader.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		if err := controllerutil.SetControllerReference(owner, want, w.scheme); err != nil {
			return false, false, fmt.Errorf("owning %s %s: %w", kind, want.GetName(), err)
		}
		if err := w.client.Create(ctx, want); apierrors.IsAlreadyExists(err) {
			return false, false, w.taken(ctx, owner, want, kind)
		} else if err != nil {
			return false, false, fmt.Errorf("creating %s %s: %w", kind, want.GetName(), err)
		}
		return true, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("getting %s %s: %w", kind, want.GetName(), err)
	}
	if !metav1.IsControlledBy(got, owner) {
		return false, false, fmt.Errorf("the %s %s %w", kind, want.GetName(), errNotOwned)
	}
	return false, got.GetAnnotations()[SpecHashAnnotationKey] != hash, nil
}

// taken explains a create of obj that found its name taken: errStale when
// the object there is owner's, else errNotOwned.
func (w objectWriter) taken(ctx context.Context, owner, obj client.Object, kind string) error {
	existing, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("the %s %s %w", kind, obj.GetName(), errNotOwned)
	}
	if err := w.apiReader.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return fmt.Errorf("getting %s %s: %w", kind, obj.GetName(), err)
	}
	if metav1.IsControlledBy(existing, owner) {
		return errStale
	}
	return fmt.Errorf("the %s %s %w", kind, obj.GetName(), errNotOwned)
}

// mergeAnnotations returns a copy of a with the entries of b.
func mergeAnnotations(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
