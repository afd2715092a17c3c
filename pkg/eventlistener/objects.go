package eventlistener

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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/accelstack/accelstack/pkg/eventlistener/serverconfig"
)

// SpecHashAnnotationKey is the annotation, on a Deployment or Service,
// holding a hash of the spec the controller last wrote; the controller rewrites the spec when the
// hash of the one it wants differs, and leaves the fields the API server
// defaults alone.
const SpecHashAnnotationKey = "tensorstack.dev/spec-hash"

// runAsUser is the user and group the servers run as, the image's.
const runAsUser = 65532

// servicePort is the port of the Services.
const servicePort = 80

// DefaultResources are the resources of a server whose listener or
// trigger names none.
func DefaultResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("100Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("200Mi")},
	}
}

// serverSpec is what differs between the servers of listeners and
// triggers.
type serverSpec struct {
	// name of the Deployment and Service; labels of both and of the pods.
	name   string
	labels map[string]string
	// replicas and resources from the listener's or trigger's spec.
	replicas  *int32
	resources *corev1.ResourceRequirements
	image     string
	// command is listen or trigger; env configures it.
	command string
	env     []corev1.EnvVar
	// headless makes the Service headless, its name resolving to the
	// pods' addresses and its port the pods' own: a trigger's Service,
	// which only listeners reach, and which so works without kube-proxy.
	headless bool
	// serviceAccountName, when set, runs the pods as that account with
	// its token mounted; otherwise no token is mounted.
	serviceAccountName string
	mountToken         bool
	// volumes of the pods, mounted in the container by mounts.
	volumes []corev1.Volume
	mounts  []corev1.VolumeMount
}

// deployment returns the Deployment of s in namespace.
func (s serverSpec) deployment(namespace string) *appsv1.Deployment {
	resources := DefaultResources()
	if s.resources != nil {
		resources = *s.resources.DeepCopy()
	}
	replicas := ptr.Deref(s.replicas, 1)
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
			PeriodSeconds: 10,
		}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: s.name, Labels: s.labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{WorkflowEventsLabelKey: s.name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: s.labels},
				Spec: corev1.PodSpec{
					ServiceAccountName:           s.serviceAccountName,
					Volumes:                      s.volumes,
					AutomountServiceAccountToken: ptr.To(s.mountToken),
					EnableServiceLinks:           ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true),
						RunAsUser:    ptr.To[int64](runAsUser),
						RunAsGroup:   ptr.To[int64](runAsUser),
						// The group of the mounted secret's file.
						FSGroup:        ptr.To[int64](runAsUser),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:           s.command,
						Image:          s.image,
						Args:           []string{s.command},
						Env:            s.env,
						VolumeMounts:   s.mounts,
						Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: serverconfig.Port, Protocol: corev1.ProtocolTCP}},
						Resources:      resources,
						ReadinessProbe: probe(serverconfig.ReadyzPath),
						LivenessProbe:  probe(serverconfig.HealthzPath),
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
}

// service returns the Service of s in namespace: port 80 to the pods'
// 8080, or a headless Service on 8080.
func (s serverSpec) service(namespace string) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: s.name, Labels: s.labels},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{WorkflowEventsLabelKey: s.name},
			Ports: []corev1.ServicePort{{
				Name: "http", Port: servicePort, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
	if s.headless {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		svc.Spec.Ports[0].Port = serverconfig.Port
	}
	return svc
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

// objectWriter writes the objects of one listener or trigger.
type objectWriter struct {
	client client.Client
	// reader is the controllers' cache; apiReader the API server, read
	// when a create finds the name taken.
	reader, apiReader client.Reader
	scheme            *runtime.Scheme
}

// errStale is a create that found the name taken by the owner's own
// object, which the cache has not seen yet.
var errStale = errors.New("the cache has not seen the object yet")

// stale reports whether err comes of a cache behind the API server: a
// create that found the owner's own object (errStale), or an update of an
// object changed since the cache read it (a conflict). Both are retried
// after a while rather than reported.
func stale(err error) bool {
	return errors.Is(err, errStale) || apierrors.IsConflict(err)
}

// taken explains a create of obj that found its name taken: errStale, or
// an error naming the object that is not the owner's.
func (w objectWriter) taken(ctx context.Context, owner, obj client.Object, kind string) error {
	existing, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("the %s %s exists", kind, obj.GetName())
	}
	if err := w.apiReader.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return fmt.Errorf("getting %s %s: %w", kind, obj.GetName(), err)
	}
	if metav1.IsControlledBy(existing, owner) {
		return errStale
	}
	return fmt.Errorf("the %s %s exists and is not %s's", kind, obj.GetName(), owner.GetName())
}

// ensureDeployment creates the Deployment want, owned by owner, or updates
// the one there when its spec hash differs, and returns it as the reader
// sees it (nil when just created). created reports a creation.
func (w objectWriter) ensureDeployment(ctx context.Context, owner client.Object, want *appsv1.Deployment) (got *appsv1.Deployment, created bool, err error) {
	hash, err := specHash(want.Spec)
	if err != nil {
		return nil, false, err
	}
	setHash(&want.ObjectMeta, hash)
	got = &appsv1.Deployment{}
	err = w.reader.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		if err := controllerutil.SetControllerReference(owner, want, w.scheme); err != nil {
			return nil, false, fmt.Errorf("owning Deployment %s: %w", want.Name, err)
		}
		if err := w.client.Create(ctx, want); apierrors.IsAlreadyExists(err) {
			return nil, false, w.taken(ctx, owner, want, "Deployment")
		} else if err != nil {
			return nil, false, fmt.Errorf("creating Deployment %s: %w", want.Name, err)
		}
		return want, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("getting Deployment %s: %w", want.Name, err)
	}
	if !metav1.IsControlledBy(got, owner) {
		return nil, false, fmt.Errorf("the Deployment %s exists and is not %s's", want.Name, owner.GetName())
	}
	if got.Annotations[SpecHashAnnotationKey] == hash {
		return got, false, nil
	}
	got = got.DeepCopy()
	got.Labels, got.Annotations = want.Labels, mergeHash(got.Annotations, hash)
	got.Spec.Replicas, got.Spec.Template = want.Spec.Replicas, want.Spec.Template
	if err := w.client.Update(ctx, got); err != nil {
		return nil, false, fmt.Errorf("updating Deployment %s: %w", want.Name, err)
	}
	return got, false, nil
}

// ensureService creates the Service want, owned by owner, or updates the
// ports and selector of the one there when its spec hash differs.
func (w objectWriter) ensureService(ctx context.Context, owner client.Object, want *corev1.Service) (created bool, err error) {
	hash, err := specHash(want.Spec)
	if err != nil {
		return false, err
	}
	setHash(&want.ObjectMeta, hash)
	got := &corev1.Service{}
	err = w.reader.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		if err := controllerutil.SetControllerReference(owner, want, w.scheme); err != nil {
			return false, fmt.Errorf("owning Service %s: %w", want.Name, err)
		}
		if err := w.client.Create(ctx, want); apierrors.IsAlreadyExists(err) {
			return false, w.taken(ctx, owner, want, "Service")
		} else if err != nil {
			return false, fmt.Errorf("creating Service %s: %w", want.Name, err)
		}
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("getting Service %s: %w", want.Name, err)
	}
	if !metav1.IsControlledBy(got, owner) {
		return false, fmt.Errorf("the Service %s exists and is not %s's", want.Name, owner.GetName())
	}
	if got.Annotations[SpecHashAnnotationKey] == hash {
		return false, nil
	}
	got = got.DeepCopy()
	got.Labels, got.Annotations = want.Labels, mergeHash(got.Annotations, hash)
	got.Spec.Ports, got.Spec.Selector = want.Spec.Ports, want.Spec.Selector
	if err := w.client.Update(ctx, got); err != nil {
		return false, fmt.Errorf("updating Service %s: %w", want.Name, err)
	}
	return false, nil
}

// setHash sets the spec hash annotation of m.
func setHash(m *metav1.ObjectMeta, hash string) {
	m.Annotations = mergeHash(m.Annotations, hash)
}

// mergeHash returns a copy of annotations with the spec hash.
func mergeHash(annotations map[string]string, hash string) map[string]string {
	out := make(map[string]string, len(annotations)+1)
	for k, v := range annotations {
		out[k] = v
	}
	out[SpecHashAnnotationKey] = hash
	return out
}
