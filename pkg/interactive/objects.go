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

// SpecHashAnnotationKey is the annotation, on a Deployment or Service,
// holding a hash of the spec the controller last wrote: the controller
// rewrites the spec only when the hash of the one it wants differs, and so
// leaves alone the fields the API server defaults.
const SpecHashAnnotationKey = "tensorstack.dev/spec-hash"

// ErrStale is a create that found the name taken by the owner's own
// object, which the controller's cache has not seen yet: the caller tries
// again shortly.
var ErrStale = errors.New("the cache has not seen the object yet")

// ErrNotOwned is an object of the wanted name that belongs to something
// else; the controller leaves it alone and reports it.
var ErrNotOwned = errors.New("exists and is not the workload's")

// Writer creates and updates the Deployments and Services of workloads.
type Writer struct {
	// Client writes; Reader is the controller's cache of the objects;
	// APIReader reads the API server when a create finds the name taken.
	Client            client.Client
	Reader, APIReader client.Reader
	Scheme            *runtime.Scheme
}

// EventCreated is the reason of the event recorded on a workload whose
// Deployment or Service was created.
const EventCreated = "Created"

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
	svc := wl.Service()
	if created, err = w.EnsureService(ctx, owner, svc); err != nil {
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
// updates the labels, replicas and pod template of the one there when its
// spec hash differs. It returns the Deployment (want itself when just
// created) and whether it created it.
func (w Writer) EnsureDeployment(ctx context.Context, owner client.Object, want *appsv1.Deployment) (*appsv1.Deployment, bool, error) {
	got := &appsv1.Deployment{}
	created, changed, err := w.ensure(ctx, owner, want, &want.ObjectMeta, want.Spec, got)
	if err != nil || created {
		return want, created, err
	}
	if changed {
		got = got.DeepCopy()
		got.Labels, got.Annotations = want.Labels, want.Annotations
		got.Spec.Replicas, got.Spec.Template, got.Spec.Strategy = want.Spec.Replicas, want.Spec.Template, want.Spec.Strategy
		if err := w.Client.Update(ctx, got); err != nil {
			return nil, false, fmt.Errorf("updating Deployment %s: %w", want.Name, err)
		}
	}
	return got, false, nil
}

// EnsureService creates the Service want, controlled by owner, or updates
// the labels, ports and selector of the one there when its spec hash
// differs. It reports whether it created it.
func (w Writer) EnsureService(ctx context.Context, owner client.Object, want *corev1.Service) (bool, error) {
	got := &corev1.Service{}
	created, changed, err := w.ensure(ctx, owner, want, &want.ObjectMeta, want.Spec, got)
	if err != nil || created || !changed {
		return created, err
	}
	got = got.DeepCopy()
	got.Labels, got.Annotations = want.Labels, want.Annotations
	got.Spec.Ports, got.Spec.Selector = want.Spec.Ports, want.Spec.Selector
	if err := w.Client.Update(ctx, got); err != nil {
		return false, fmt.Errorf("updating Service %s: %w", want.Name, err)
	}
	return false, nil
}

// ensure stamps want with the hash of spec and creates it when the reader
// does not have it, reading it into got otherwise; changed reports that
// got, which is controlled by owner, has another hash. The annotations of
// want end up merged over got's.
func (w Writer) ensure(ctx context.Context, owner, want client.Object, meta *metav1.ObjectMeta, spec any, got client.Object) (created, changed bool, err error) {
	kind := kindOf(want)
	hash, err := specHash(spec)
	if err != nil {
		return false, false, err
	}
	meta.Annotations = merge(meta.Annotations, map[string]string{SpecHashAnnotationKey: hash})
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
	meta.Annotations = merge(got.GetAnnotations(), meta.Annotations)
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
	case *networkingv1.NetworkPolicy:
		return "NetworkPolicy"
	}
	return "Service"
}

// specHash returns a hash of the JSON of spec.
func specHash(spec any) (string, error) {
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
