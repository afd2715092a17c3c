package interactive

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/explorer"
	"github.com/accelstack/accelstack/pkg/interactive"
	"github.com/accelstack/accelstack/pkg/tensorboard"
	"github.com/accelstack/accelstack/test/testutil"
)

// waitExplorer waits until cond holds of the Explorer ns/name and returns
// it.
func (e *env) waitExplorer(ctx context.Context, t *testing.T, ns, name string, cond func(*tensorstackv1beta1.Explorer) bool) *tensorstackv1beta1.Explorer {
	t.Helper()
	ex := &tensorstackv1beta1.Explorer{}
	testutil.Poll(ctx, t, "Explorer "+name, func() (bool, string, error) {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ex); err != nil {
			return false, "", err
		}
		return cond(ex), fmt.Sprintf("status %+v fileBrowser %+v codeServer %+v", ex.Status.Conditions, ex.Status.FileBrowser, ex.Status.CodeServer), nil
	})
	return ex
}

// exReady returns the Ready condition of ex, or a zero one.
func exReady(ex *tensorstackv1beta1.Explorer) tensorstackv1beta1.WorkloadCondition {
	for _, c := range ex.Status.Conditions {
		if c.Type == tensorstackv1beta1.ConditionReady {
			return c
		}
	}
	return tensorstackv1beta1.WorkloadCondition{}
}

// readyIs is an Explorer condition: Ready has status and reason.
func readyIs(status corev1.ConditionStatus, reason string) func(*tensorstackv1beta1.Explorer) bool {
	return func(ex *tensorstackv1beta1.Explorer) bool {
		c := exReady(ex)
		return c.Status == status && c.Reason == reason
	}
}

// phases is an Explorer condition: both sub-workloads are in phase p.
func phases(p tensorstackv1beta1.ResourcePhase) func(*tensorstackv1beta1.Explorer) bool {
	return func(ex *tensorstackv1beta1.Explorer) bool {
		return ex.Status.FileBrowser != nil && ex.Status.FileBrowser.Phase == p && ex.Status.CodeServer != nil && ex.Status.CodeServer.Phase == p
	}
}

// testExplorer: an Explorer on a missing PVC says so, with an event, and
// runs nothing; once the PVC exists it gets a file browser and code-server,
// each a Deployment behind the sidecar and a Service; its status follows
// the pods; suspend scales both to 0 and keeps the Services.
func (e *env) testExplorer(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	ex := &tensorstackv1beta1.Explorer{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "example"},
		Spec:       tensorstackv1beta1.ExplorerSpec{StorageName: "test", StorageType: tensorstackv1beta1.StorageTypePVC},
	}
	testutil.MustCreate(ctx, t, e.c, ex)
	ex = e.waitExplorer(ctx, t, ns, ex.Name, readyIs(corev1.ConditionFalse, explorer.ReasonPVCNotFound))
	if c := exReady(ex); c.Message != "PVC test not found in namespace "+ns {
		t.Errorf("Ready %+v", c)
	}
	if !phases(tensorstackv1beta1.ResourcePending)(ex) {
		t.Errorf("fileBrowser %+v codeServer %+v", ex.Status.FileBrowser, ex.Status.CodeServer)
	}
	e.waitEvent(ctx, t, ns, ex.Name, explorer.ReasonPVCNotFound)
	for _, c := range explorer.Components {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: explorer.ObjectName(ex.Name, c)}, &corev1.Service{}); !apierrors.IsNotFound(err) {
			t.Errorf("a Service of %s without the PVC: %v", c, err)
		}
	}

	testutil.MustCreate(ctx, t, e.c, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "test"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	})
	want := map[explorer.Component]struct {
		name, url, image string
		port             int
	}{
		explorer.FileBrowser: {"example-explorer-file-browser", "http://example-explorer-file-browser." + ns + ".svc.cluster.local/explorer/" + ns + "/example/file-browser/",
			explorer.DefaultFileBrowserImage, explorer.FileBrowserPort},
		explorer.CodeServer: {"example-explorer-code-server", "http://example-explorer-code-server." + ns + ".svc.cluster.local/",
			explorer.DefaultCodeServerImage, explorer.CodeServerPort},
	}
	for _, c := range explorer.Components {
		w := want[c]
		if got := explorer.ObjectName(ex.Name, c); got != w.name {
			t.Errorf("%s objects named %s, want %s", c, got, w.name)
		}
		dep := e.waitDeployment(ctx, t, ns, w.name, replicas(1))
		if !metav1.IsControlledBy(dep, ex) {
			t.Errorf("%s owners %v", c, dep.OwnerReferences)
		}
		spec := dep.Spec.Template.Spec
		ctr := container(t, spec, string(c))
		if ctr.Image != w.image || !slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == explorer.MountPath && !m.ReadOnly }) {
			t.Errorf("%s image %s mounts %+v", c, ctr.Image, ctr.VolumeMounts)
		}
		if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool {
			return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "test"
		}) {
			t.Errorf("%s volumes %+v", c, spec.Volumes)
		}
		if bind := fmt.Sprintf("127.0.0.1:%d", w.port); !strings.Contains(strings.Join(ctr.Args, " "), "127.0.0.1") || !slices.ContainsFunc(ctr.Args, func(a string) bool {
			return strings.Contains(a, fmt.Sprint(w.port))
		}) {
			t.Errorf("%s args %q, want it on %s only", c, ctr.Args, bind)
		}
		side := container(t, spec, activity.ContainerName)
		if side.Args[0] != fmt.Sprintf("--upstream=http://127.0.0.1:%d", w.port) {
			t.Errorf("%s sidecar args %q", c, side.Args)
		}
		testutil.CheckAccess(ctx, t, e.c, testutil.Access{
			Namespace: ns, Name: w.name, Owner: ex, Selector: map[string]string{explorer.LabelKey: w.name},
			Pod: spec, Log: e.controllers.Log,
		})
		// ReadWriteOnce: both pods on one node.
		if a := spec.Affinity; a == nil || a.PodAffinity == nil || len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
			a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels[explorer.InstanceLabelKey] != explorer.InstanceName(ex.Name) {
			t.Errorf("%s affinity %+v", c, spec.Affinity)
		}
		e.checkService(ctx, t, ns, w.name, ex, map[string]string{explorer.LabelKey: w.name})
	}
	if fb := container(t, e.waitDeployment(ctx, t, ns, want[explorer.FileBrowser].name, nil).Spec.Template.Spec, string(explorer.FileBrowser)); !slices.Contains(fb.Args, "--baseurl=/explorer/"+ns+"/example/file-browser") {
		t.Errorf("file browser args %q", fb.Args)
	}
	if cs := container(t, e.waitDeployment(ctx, t, ns, want[explorer.CodeServer].name, nil).Spec.Template.Spec, string(explorer.CodeServer)); !slices.Contains(cs.Args, "--auth=none") {
		t.Errorf("code-server args %q", cs.Args)
	}

	ex = e.waitExplorer(ctx, t, ns, ex.Name, readyIs(corev1.ConditionFalse, "Waiting"))
	if ex.Status.FileBrowser.URL != want[explorer.FileBrowser].url || ex.Status.CodeServer.URL != want[explorer.CodeServer].url {
		t.Errorf("urls %s %s", ex.Status.FileBrowser.URL, ex.Status.CodeServer.URL)
	}

	pods := map[explorer.Component]*corev1.Pod{}
	for _, c := range explorer.Components {
		pods[c] = e.runPod(ctx, t, e.waitDeployment(ctx, t, ns, want[c].name, nil), "", "")
	}
	ex = e.waitExplorer(ctx, t, ns, ex.Name, readyIs(corev1.ConditionTrue, "Ready"))
	if !phases(tensorstackv1beta1.ResourceRunning)(ex) || ex.Status.FileBrowser.Pod == nil || ex.Status.FileBrowser.Pod.Reference.UID != pods[explorer.FileBrowser].UID ||
		ex.Status.CodeServer.Pod == nil || ex.Status.CodeServer.Pod.Reference.Name != pods[explorer.CodeServer].Name {
		t.Errorf("fileBrowser %+v codeServer %+v", ex.Status.FileBrowser, ex.Status.CodeServer)
	}

	e.update(ctx, t, ns, ex.Name, ex, func() { ex.Spec.Suspend = true })
	for _, c := range explorer.Components {
		e.waitDeployment(ctx, t, ns, want[c].name, replicas(0))
		e.deletePods(ctx, t, ns, explorer.LabelKey, want[c].name)
	}
	ex = e.waitExplorer(ctx, t, ns, ex.Name, func(ex *tensorstackv1beta1.Explorer) bool {
		return phases(tensorstackv1beta1.ResourceSuspended)(ex) && ex.Status.FileBrowser.Pod == nil && ex.Status.CodeServer.Pod == nil
	})
	if c := exReady(ex); c.Status != corev1.ConditionFalse || c.Reason != "Suspended" {
		t.Errorf("Ready while suspended %+v", c)
	}
	for _, c := range explorer.Components {
		e.get(ctx, t, ns, want[c].name, &corev1.Service{})
	}

	e.update(ctx, t, ns, ex.Name, ex, func() { ex.Spec.Suspend = false })
	for _, c := range explorer.Components {
		e.runPod(ctx, t, e.waitDeployment(ctx, t, ns, want[c].name, replicas(1)), "", "")
	}
	e.waitExplorer(ctx, t, ns, ex.Name, readyIs(corev1.ConditionTrue, "Ready"))
}

// testExplorerRefused: the webhook refuses a storage name that cannot
// name a PVC, naming the field.
func (e *env) testExplorerRefused(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	ex := &tensorstackv1beta1.Explorer{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refused"},
		Spec:       tensorstackv1beta1.ExplorerSpec{StorageName: "Not_A_PVC"},
	}
	if err := e.c.Create(ctx, ex); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.storageName: Invalid value: "Not_A_PVC"`) {
		t.Errorf("got %v", err)
	}
}

// testAccessSecretTaken: a Secret of the access Secret's name that is not
// the workload's is neither used nor changed: the TensorBoard fails with
// NameConflict and runs nothing.
func (e *env) testAccessSecretTaken(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	name := tensorboard.ObjectName("taken")
	taken := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: interactive.AccessSecretName(name)},
		Data:       map[string][]byte{activity.AccessTokenKey: []byte("chosen-by-someone-else")},
	}
	testutil.MustCreate(ctx, t, e.c, taken)
	tb := tensorBoard(ns, "taken")
	testutil.MustCreate(ctx, t, e.c, tb)
	e.waitTensorBoard(ctx, t, ns, tb.Name, func(tb *tensorstackv1beta1.TensorBoard) bool {
		return tb.Status.Phase == tensorstackv1beta1.TensorBoardFailed &&
			strings.Contains(tbCondition(tb, "Ready").Message, "Secret "+taken.Name+" exists and is not the workload's")
	})
	e.waitEvent(ctx, t, ns, tb.Name, tensorboard.ReasonNameConflict)
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Deployment with another's access Secret: %v", err)
	}
	got := &corev1.Secret{}
	e.get(ctx, t, ns, taken.Name, got)
	if string(got.Data[activity.AccessTokenKey]) != "chosen-by-someone-else" || len(got.OwnerReferences) != 0 {
		t.Errorf("the Secret changed: owners %v", got.OwnerReferences)
	}
}
