package interactive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// SpecHashAnnotationKey is the annotation, on an object Writer writes (a
// Deployment, StatefulSet, Service or NetworkPolicy), holding SpecHash of
// the spec the controller last wrote: the controller rewrites the spec
// only when the hash of the one it wants differs, and so leaves alone the
// fields the API server defaults.
const SpecHashAnnotationKey = "tensorstack.dev/spec-hash"

// ErrStale is a create that found the name taken by the owner's own
// object, which the controller's cache has not seen yet: the caller tries
// again shortly.
var ErrStale = errors.New("the cache has not seen the object yet")

// ErrNotOwned is an object of the wanted name that belongs to something
// else; the controller leaves it alone and reports it.
var ErrNotOwned = errors.New("exists and is not the workload's")

// Writer creates and updates the objects of workloads (Deployments,
// StatefulSets, Services, NetworkPolicies, access Secrets), each
// controlled by its workload, and deletes them.
type Writer struct {
	// Client writes; Reader is the controller's cache of the objects;
	// APIReader reads the API server when a create finds the name taken.
	Client            client.Client
	Reader, APIReader client.Reader
	Scheme            *runtime.Scheme
}

// The reasons of the events recorded on a workload.
const (
	// EventCreated: the controller created one of its objects.
	EventCreated = "Created"
	// EventFailed: the controller could not write one (EnsureFailed).
	EventFailed = "Failed"
)

// Ensure makes the access Secret, NetworkPolicy, Deployment and Service of
// wl, controlled by owner, recording their creation on owner with
// recorder, and returns the Deployment.
func (w Writer) Ensure(ctx context.Context, recorder events.EventRecorder, owner client.Object, wl Workload) (*appsv1.Deployment, error) {
	log := ctrl.LoggerFrom(ctx)
	if err := w.EnsureAccess(ctx, recorder, owner, wl.Namespace, wl.Name, wl.Labels, wl.Selector, false); err != nil {
		return nil, err
	}
	dep, created, err := w.EnsureDeployment(ctx, owner, wl.Deployment())
	if err != nil {
		return nil, err
	}
	if created {
		log.V(3).Info("Created Deployment", "deployment", klog.KObj(dep))
		recorder.Eventf(owner, dep, corev1.EventTypeNormal, EventCreated, "CreateDeployment", "Created Deployment %s", dep.Name)
	}
	svc, created, err := w.EnsureService(ctx, owner, wl.Service())
	if err != nil {
		return nil, err
	}
	if created {
		log.V(3).Info("Created Service", "service", klog.KObj(svc))
		recorder.Eventf(owner, svc, corev1.EventTypeNormal, EventCreated, "CreateService", "Created Service %s", svc.Name)
	}
	return dep, nil
}

// EnsureAccess makes the access Secret and the NetworkPolicy of the
// workload child name of namespace, whose objects carry labels and whose
// pods selector selects, controlled by owner, recording their creation on
// owner with recorder; openSSH admits any client to the SSH port (see
// NetworkPolicy).
func (w Writer) EnsureAccess(ctx context.Context, recorder events.EventRecorder, owner client.Object, namespace, name string, labels, selector map[string]string, openSSH bool) error {
	log := ctrl.LoggerFrom(ctx)
	created, err := w.EnsureAccessSecret(ctx, owner, namespace, name, labels)
	if err != nil {
		return err
	}
	if created {
		log.V(3).Info("Created access Secret", "secret", klog.KRef(namespace, AccessSecretName(name)))
		recorder.Eventf(owner, nil, corev1.EventTypeNormal, EventCreated, "CreateSecret", "Created access Secret %s", AccessSecretName(name))
	}
	np := NetworkPolicy(namespace, name, labels, selector, openSSH)
	if created, err = w.EnsureNetworkPolicy(ctx, owner, np); err != nil {
		return err
	}
	if created {
		log.V(3).Info("Created NetworkPolicy", "networkpolicy", klog.KObj(np))
		recorder.Eventf(owner, np, corev1.EventTypeNormal, EventCreated, "CreateNetworkPolicy", "Created NetworkPolicy %s", np.Name)
	}
	return nil
}

// EnsureDeployment creates the Deployment want, controlled by owner, or
// updates the labels, replicas, strategy and pod template of the one there
// when its spec hash differs. It returns the Deployment (want itself when
// just created) and whether it created it.
func (w Writer) EnsureDeployment(ctx context.Context, owner client.Object, want *appsv1.Deployment) (*appsv1.Deployment, bool, error) {
	return write(ctx, w, owner, want, &appsv1.Deployment{}, want.Spec, func(got, want *appsv1.Deployment) {
		got.Spec.Replicas, got.Spec.Template, got.Spec.Strategy = want.Spec.Replicas, want.Spec.Template, want.Spec.Strategy
	})
}

// EnsureStatefulSet creates the StatefulSet want, controlled by owner, or
// updates the labels, replicas and pod template of the one there when its
// spec hash differs. It returns the StatefulSet (want itself when just
// created) and whether it created it.
func (w Writer) EnsureStatefulSet(ctx context.Context, owner client.Object, want *appsv1.StatefulSet) (*appsv1.StatefulSet, bool, error) {
	return write(ctx, w, owner, want, &appsv1.StatefulSet{}, want.Spec, func(got, want *appsv1.StatefulSet) {
		got.Spec.Replicas, got.Spec.Template = want.Spec.Replicas, want.Spec.Template
	})
}

// EnsureService creates the Service want, controlled by owner, or updates
// the labels, type (when want sets one), ports and selector of the one
// there when its spec hash differs. It returns the Service (want itself
// when just created) and whether it created it.
func (w Writer) EnsureService(ctx context.Context, owner client.Object, want *corev1.Service) (*corev1.Service, bool, error) {
	return write(ctx, w, owner, want, &corev1.Service{}, want.Spec, func(got, want *corev1.Service) {
		if want.Spec.Type != "" {
			got.Spec.Type = want.Spec.Type
		}
		got.Spec.Ports, got.Spec.Selector = want.Spec.Ports, want.Spec.Selector
	})
}

// write creates want, controlled by owner, or, when the object of its name
// (read into got, an empty one of the kind) has another hash of spec,
// updates that object's labels and annotations and, with update, the parts
// of its spec the controller owns. It returns the object (want itself when
// just created) and whether it created it.
func write[T client.Object](ctx context.Context, w Writer, owner client.Object, want, got T, spec any, update func(got, want T)) (T, bool, error) {
	created, changed, err := w.ensure(ctx, owner, want, spec, got)
	if err != nil || created {
		return want, created, err
	}
	if !changed {
		return got, false, nil
	}
	got, _ = got.DeepCopyObject().(T)
	got.SetLabels(want.GetLabels())
	got.SetAnnotations(want.GetAnnotations())
	update(got, want)
	if err := w.Client.Update(ctx, got); err != nil {
		var none T
		return none, false, fmt.Errorf("updating %s %s: %w", kindOf(want), want.GetName(), err)
	}
	return got, false, nil
}

// Delete deletes obj, read by its namespace and name, when owner controls
// it, and reports whether it did; one that is not there, or not owner's,
// is left as it is.
func (w Writer) Delete(ctx context.Context, owner, obj client.Object) (bool, error) {
	kind := kindOf(obj)
	if err := w.Reader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("getting %s %s: %w", kind, obj.GetName(), err)
	}
	if !metav1.IsControlledBy(obj, owner) {
		return false, nil
	}
	uid := obj.GetUID()
	if err := w.Client.Delete(ctx, obj, client.Preconditions{UID: &uid}); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("deleting %s %s: %w", kind, obj.GetName(), err)
	}
	return true, nil
}

// ensure stamps want with the hash of spec and creates it when the reader
// does not have it, reading it into got otherwise; changed reports that
// got, which is controlled by owner, has another hash. The annotations of
// want end up merged over got's.
func (w Writer) ensure(ctx context.Context, owner, want client.Object, spec any, got client.Object) (created, changed bool, err error) {
	kind := kindOf(want)
	hash, err := SpecHash(spec)
	if err != nil {
		return false, false, err
	}
	want.SetAnnotations(merge(want.GetAnnotations(), map[string]string{SpecHashAnnotationKey: hash}))
	err = w.Reader.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		if err := controllerutil.SetControllerReference(owner, want, w.Scheme); err != nil {
			return false, false, fmt.Errorf("owning %s %s: %w", kind, want.GetName(), err)
		}
		if err := w.Client.Create(ctx, want); apierrors.IsAlreadyExists(err) {
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
		return false, false, fmt.Errorf("the %s %s %w", kind, want.GetName(), ErrNotOwned)
	}
	if got.GetAnnotations()[SpecHashAnnotationKey] == hash {
		return false, false, nil
	}
	want.SetAnnotations(merge(got.GetAnnotations(), want.GetAnnotations()))
	return false, true, nil
}

// taken explains a create of obj that found its name taken: ErrStale, or
// ErrNotOwned naming the object.
func (w Writer) taken(ctx context.Context, owner, obj client.Object, kind string) error {
	existing, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("the %s %s %w", kind, obj.GetName(), ErrNotOwned)
	}
	if err := w.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return fmt.Errorf("getting %s %s: %w", kind, obj.GetName(), err)
	}
	if metav1.IsControlledBy(existing, owner) {
		return ErrStale
	}
	return fmt.Errorf("the %s %s %w", kind, obj.GetName(), ErrNotOwned)
}

// kindOf names the kind of the objects Writer writes.
func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *appsv1.Deployment:
		return "Deployment"
	case *appsv1.StatefulSet:
		return "StatefulSet"
	case *networkingv1.NetworkPolicy:
		return "NetworkPolicy"
	}
	return "Service"
}

// SpecHash returns a hash of the JSON of spec, the value of
// SpecHashAnnotationKey: 16 hex digits of its SHA-256.
func SpecHash(spec any) (string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("hashing a spec: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16], nil
}

// merge returns a copy of a with the entries of b.
func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}
