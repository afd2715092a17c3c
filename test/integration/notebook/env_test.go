package notebook

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/notebook"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// env is the control plane the subtests share.
type env struct {
	controllers *harness.Controllers
	c           client.Client
}

// startEnv starts the control plane, the Notebook webhook configuration of
// deploy/controllers pointed at the in-process controllers, and the
// controllers.
func startEnv(t *testing.T) *env {
	t.Helper()
	cp := harness.StartControlPlane(t)
	cp.InstallWebhook(t, "controllers/notebooks-webhook.yaml", nil)
	return &env{controllers: cp.StartControllers(t), c: cp.Client}
}

// namespace creates a namespace for one subtest.
func (e *env) namespace(t *testing.T) string {
	t.Helper()
	return testutil.Namespace(t, e.c, "nb", nil)
}

// seedNotebook is the seed's SSH example: a Jupyter notebook with the PVC
// at /t9k/mnt, GPU limits and SSH for the Secret example-user.
func seedNotebook(ns, name string) *tensorstackv1beta1.Notebook {
	return &tensorstackv1beta1.Notebook{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: tensorstackv1beta1.NotebookSpec{
			Type: tensorstackv1beta1.NotebookJupyter,
			Template: tensorstackv1beta1.NotebookTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name:         tensorstackv1beta1.NotebookContainer,
					Image:        "t9kpublic/torch-2.1.0-notebook:1.77.1",
					VolumeMounts: []corev1.VolumeMount{{Name: "workingdir", MountPath: "/t9k/mnt"}},
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
						corev1.ResourceCPU: resourceQuantity("16"), corev1.ResourceMemory: resourceQuantity("32Gi"), "nvidia.com/gpu": resourceQuantity("1"),
					}},
				}},
				Volumes: []corev1.Volume{{Name: "workingdir", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name},
				}}},
			}},
			SSH: &tensorstackv1beta1.NotebookSSHSpec{Enabled: true, ServiceType: corev1.ServiceTypeClusterIP, AuthorizedKeys: []string{"example-user"}},
		},
	}
}

// publicKey is an SSH public key as the console stores it.
const publicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@laptop\n"

// sshSecret is an SSH Public Key Secret of the usage type typ.
func sshSecret(ns, name, typ string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{notebook.ResourceLabelKey: typ}},
		Data:       map[string][]byte{notebook.SSHPublicKeyKey: []byte(publicKey)},
	}
}

// notebook reads the Notebook ns/name.
func (e *env) notebook(ctx context.Context, t *testing.T, ns, name string) *tensorstackv1beta1.Notebook {
	t.Helper()
	nb := &tensorstackv1beta1.Notebook{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, nb); err != nil {
		t.Fatal(err)
	}
	return nb
}

// update changes the Notebook ns/name with edit, retrying on conflicts.
func (e *env) update(ctx context.Context, t *testing.T, ns, name string, edit func(*tensorstackv1beta1.Notebook)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		nb := &tensorstackv1beta1.Notebook{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, nb); err != nil {
			return err
		}
		edit(nb)
		return e.c.Update(ctx, nb)
	})
	if err != nil {
		t.Fatalf("updating Notebook %s: %v", name, err)
	}
}

// waitNotebook waits until cond holds for the Notebook ns/name and returns
// it.
func (e *env) waitNotebook(ctx context.Context, t *testing.T, ns, name, what string, cond func(*tensorstackv1beta1.Notebook) bool) *tensorstackv1beta1.Notebook {
	t.Helper()
	var nb *tensorstackv1beta1.Notebook
	testutil.Poll(ctx, t, fmt.Sprintf("Notebook %s: %s", name, what), func() (bool, string, error) {
		nb = e.notebook(ctx, t, ns, name)
		return cond(nb), fmt.Sprintf("status %+v", nb.Status), nil
	})
	return nb
}

// waitFor waits until the object ns/name exists and reads it into obj.
func (e *env) waitFor(ctx context.Context, t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	testutil.Poll(ctx, t, fmt.Sprintf("%T %s", obj, name), func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
		return err == nil, fmt.Sprint(err), nil
	})
}

// statefulSet waits for the StatefulSet of the Notebook ns/name and returns
// it, until cond holds when cond is not nil.
func (e *env) statefulSet(ctx context.Context, t *testing.T, ns, name string, cond func(*appsv1.StatefulSet) bool) *appsv1.StatefulSet {
	t.Helper()
	nb := e.notebook(ctx, t, ns, name)
	sts := &appsv1.StatefulSet{}
	testutil.Poll(ctx, t, "StatefulSet of "+name, func() (bool, string, error) {
		err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: notebook.ObjectName(nb.UID)}, sts)
		if err != nil {
			return false, err.Error(), nil //nolint:nilerr // not created yet: poll again
		}
		return cond == nil || cond(sts), fmt.Sprintf("spec %+v", sts.Spec), nil
	})
	return sts
}

// createPod creates the pod of sts as the StatefulSet controller would.
func (e *env) createPod(ctx context.Context, t *testing.T, sts *appsv1.StatefulSet) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: sts.Namespace, Name: notebook.PodName(sts.Name),
			Labels: sts.Spec.Template.Labels, Annotations: sts.Spec.Template.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: sts.Spec.Template.Spec,
	}
	testutil.MustCreate(ctx, t, e.c, pod)
	return pod
}

// setPodStatus writes the pod's status as the kubelet would: phase, ready,
// and the notebook container's state.
func (e *env) setPodStatus(ctx context.Context, t *testing.T, pod *corev1.Pod, phase corev1.PodPhase, ready bool, state corev1.ContainerState) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &corev1.Pod{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return err
		}
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		p.Status.Phase = phase
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: tensorstackv1beta1.NotebookContainer, State: state, Ready: ready}}
		return e.c.Status().Update(ctx, p)
	})
	if err != nil {
		t.Fatalf("writing the status of pod %s: %v", pod.Name, err)
	}
}

// condition returns the condition typ of nb, or a zero one.
func condition(nb *tensorstackv1beta1.Notebook, typ string) tensorstackv1beta1.WorkloadCondition {
	for _, c := range nb.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return tensorstackv1beta1.WorkloadCondition{}
}

// waitEvent waits for an event of reason about the object named regarding
// in ns and returns its note.
func (e *env) waitEvent(ctx context.Context, t *testing.T, ns, regarding, reason string) string {
	t.Helper()
	var note string
	testutil.Poll(ctx, t, fmt.Sprintf("event %s about %s", reason, regarding), func() (bool, string, error) {
		var list eventsv1.EventList
		if err := e.c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, "", err
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.Regarding.Name == regarding && ev.Reason == reason {
				note = ev.Note
				return true, "", nil
			}
			seen = append(seen, ev.Reason+" "+ev.Regarding.Name)
		}
		return false, strings.Join(seen, ", "), nil
	})
	return note
}
