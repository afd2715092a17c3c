package explorer

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulerv1beta1 "github.com/accelstack/accelstack/api/scheduler/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
	"github.com/accelstack/accelstack/pkg/interactive"
)

// explorerOn is the seed's Explorer in namespace demo on the PVC test.
func explorerOn() *tensorstackv1beta1.Explorer {
	return &tensorstackv1beta1.Explorer{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "example"},
		Spec:       tensorstackv1beta1.ExplorerSpec{StorageName: "test", StorageType: tensorstackv1beta1.StorageTypePVC},
	}
}

// claim is the PVC test with access modes.
func claim(modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "test"},
		Spec:       corev1.PersistentVolumeClaimSpec{AccessModes: modes},
	}
}

func TestWorkloads(t *testing.T) {
	opts := Options{}.withDefaults()
	for _, tc := range []struct {
		c           Component
		wantName    string
		wantImage   string
		wantCommand []string
		wantArgs    []string
		wantPort    int32
	}{{
		c: FileBrowser, wantName: "example-explorer-file-browser", wantImage: DefaultFileBrowserImage,
		wantCommand: []string{"/filebrowser"},
		wantArgs: []string{"--address=127.0.0.1", "--port=8081", "--root=/t9k/mnt", "--baseurl=/explorer/demo/example/file-browser",
			"--database=/var/lib/filebrowser/filebrowser.db", "--noauth"},
		wantPort: FileBrowserPort,
	}, {
		c: CodeServer, wantName: "example-explorer-code-server", wantImage: DefaultCodeServerImage,
		wantCommand: []string{"/usr/bin/dumb-init", "/usr/bin/code-server"},
		wantArgs:    []string{"--bind-addr=127.0.0.1:8082", "--auth=none", "--disable-telemetry", "--disable-update-check", "/t9k/mnt"},
		wantPort:    CodeServerPort,
	}} {
		t.Run(string(tc.c), func(t *testing.T) {
			w := workload(explorerOn(), claim(corev1.ReadWriteMany), tc.c, opts)
			dep := w.Deployment()
			if dep.Name != tc.wantName || *dep.Spec.Replicas != 1 {
				t.Errorf("Deployment %s replicas %d", dep.Name, *dep.Spec.Replicas)
			}
			wantLabels := map[string]string{
				LabelKey: tc.wantName, InstanceLabelKey: "example-explorer",
				interactive.AppNameLabelKey: "explorer", interactive.AppInstanceLabelKey: "example",
				interactive.AppComponentLabelKey: string(tc.c), interactive.AppManagedByLabelKey: interactive.ManagedBy,
			}
			if diff := cmp.Diff(wantLabels, dep.Spec.Template.Labels); diff != "" {
				t.Errorf("pod labels (-want +got):\n%s", diff)
			}
			spec := dep.Spec.Template.Spec
			if len(spec.Containers) != 2 || spec.Containers[1].Name != activity.ContainerName {
				t.Fatalf("containers %+v", spec.Containers)
			}
			ctr := spec.Containers[0]
			if ctr.Name != string(tc.c) || ctr.Image != tc.wantImage || !cmp.Equal(ctr.Command, tc.wantCommand) || !cmp.Equal(ctr.Args, tc.wantArgs) {
				t.Errorf("container %s image %s command %q args %q", ctr.Name, ctr.Image, ctr.Command, ctr.Args)
			}
			if ctr.VolumeMounts[0].Name != dataVolume || ctr.VolumeMounts[0].MountPath != MountPath || ctr.VolumeMounts[0].ReadOnly {
				t.Errorf("mounts %+v", ctr.VolumeMounts)
			}
			if spec.Volumes[0].PersistentVolumeClaim == nil || spec.Volumes[0].PersistentVolumeClaim.ClaimName != "test" {
				t.Errorf("volumes %+v", spec.Volumes)
			}
			if sc := spec.SecurityContext; !ptr.Deref(sc.RunAsNonRoot, false) || ptr.Deref(sc.RunAsUser, 0) != User || ptr.Deref(sc.RunAsGroup, 0) != User {
				t.Errorf("pod security context %+v", sc)
			}
			if sc := ctr.SecurityContext; ptr.Deref(sc.AllowPrivilegeEscalation, true) {
				t.Errorf("container security context %+v", sc)
			}
			if side := spec.Containers[1]; !cmp.Equal(side.Args, []string{fmt.Sprintf("--upstream=http://127.0.0.1:%d", tc.wantPort), "--access-token-file=/var/run/t9k/access/token"}) {
				t.Errorf("sidecar args %q", side.Args)
			}
			if spec.Affinity != nil {
				t.Errorf("affinity on a ReadWriteMany PVC: %+v", spec.Affinity)
			}
		})
	}
}

// TestWorkloadOnOneNode: with a PVC only one node may attach, both pods
// must meet on one node.
func TestWorkloadOnOneNode(t *testing.T) {
	for _, modes := range [][]corev1.PersistentVolumeAccessMode{{corev1.ReadWriteOnce}, nil} {
		spec := workload(explorerOn(), claim(modes...), CodeServer, Options{}.withDefaults()).Deployment().Spec.Template.Spec
		want := &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{InstanceLabelKey: "example-explorer"}},
			TopologyKey:   corev1.LabelHostname,
		}}}}
		if diff := cmp.Diff(want, spec.Affinity); diff != "" {
			t.Errorf("%v: affinity (-want +got):\n%s", modes, diff)
		}
	}
}

func TestWorkloadSuspendAndQueue(t *testing.T) {
	ex := explorerOn()
	ex.Spec.Suspend = true
	ex.Spec.Scheduler = &tensorstackv1beta1.SchedulePolicy{T9kScheduler: &tensorstackv1beta1.T9kScheduler{Queue: "default"}}
	opts := Options{FileBrowserImage: "fb:2", CodeServerImage: "cs:2", ActivityImage: "act:2"}.withDefaults()
	dep := workload(ex, claim(corev1.ReadWriteMany), FileBrowser, opts).Deployment()
	tmpl := dep.Spec.Template
	if *dep.Spec.Replicas != 0 || tmpl.Spec.SchedulerName != schedulerv1beta1.SchedulerName || tmpl.Labels[schedulerv1beta1.QueueLabel] != "default" {
		t.Errorf("replicas %d scheduler %s labels %v", *dep.Spec.Replicas, tmpl.Spec.SchedulerName, tmpl.Labels)
	}
	if tmpl.Spec.Containers[0].Image != "fb:2" || tmpl.Spec.Containers[1].Image != "act:2" {
		t.Errorf("images %s %s", tmpl.Spec.Containers[0].Image, tmpl.Spec.Containers[1].Image)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		change    func(*tensorstackv1beta1.Explorer)
		wantField string
	}{
		{"seed example", func(*tensorstackv1beta1.Explorer) {}, ""},
		{"no storage type", func(ex *tensorstackv1beta1.Explorer) { ex.Spec.StorageType = "" }, ""},
		{"storage type", func(ex *tensorstackv1beta1.Explorer) { ex.Spec.StorageType = "s3" }, "spec.storageType"},
		{"no storage name", func(ex *tensorstackv1beta1.Explorer) { ex.Spec.StorageName = "" }, "spec.storageName"},
		{"storage name", func(ex *tensorstackv1beta1.Explorer) { ex.Spec.StorageName = "../x" }, "spec.storageName"},
		{"queue", func(ex *tensorstackv1beta1.Explorer) {
			ex.Spec.Scheduler = &tensorstackv1beta1.SchedulePolicy{T9kScheduler: &tensorstackv1beta1.T9kScheduler{Queue: "a b"}}
		}, "spec.scheduler.t9kScheduler.queue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := explorerOn()
			tc.change(ex)
			errs := Validate(ex)
			got := ""
			if len(errs) > 0 {
				got = errs[0].Field
			}
			if got != tc.wantField {
				t.Errorf("got %v, want a fault in %q", errs, tc.wantField)
			}
			if tc.wantField != "" {
				old := ex.DeepCopy()
				ex.Spec.Suspend = true
				if errs := ValidateUpdate(ex, old); len(errs) > 0 {
					t.Errorf("a suspend refused: %v", errs)
				}
			}
		})
	}
}

func TestReadiness(t *testing.T) {
	running := interactive.State{Phase: interactive.PhaseRunning, Reason: interactive.ReasonReady, Message: "Pod a is ready"}
	waiting := interactive.State{Phase: interactive.PhasePending, Reason: interactive.ReasonWaiting, Message: "Waiting for pod b to be ready"}
	missing := interactive.State{Phase: interactive.PhasePending, Reason: ReasonPVCNotFound, Message: "PVC test not found in namespace demo"}
	for _, tc := range []struct {
		name        string
		suspend     bool
		states      map[Component]interactive.State
		wantStatus  corev1.ConditionStatus
		wantReason  string
		wantMessage string
	}{
		{"both run", false, map[Component]interactive.State{FileBrowser: running, CodeServer: running},
			corev1.ConditionTrue, interactive.ReasonReady, "The file browser and code-server are ready"},
		{"one waits", false, map[Component]interactive.State{FileBrowser: running, CodeServer: waiting},
			corev1.ConditionFalse, interactive.ReasonWaiting, "code-server: Waiting for pod b to be ready"},
		{"PVC missing", false, map[Component]interactive.State{FileBrowser: missing, CodeServer: missing},
			corev1.ConditionFalse, ReasonPVCNotFound, "PVC test not found in namespace demo"},
		{"suspended", true, map[Component]interactive.State{FileBrowser: running, CodeServer: running},
			corev1.ConditionFalse, interactive.ReasonSuspended, "The Explorer is suspended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := explorerOn()
			ex.Spec.Suspend = tc.suspend
			c := readiness(ex, tc.states)
			if c.Status != tc.wantStatus || c.Reason != tc.wantReason || c.Message != tc.wantMessage {
				t.Errorf("got %+v", c)
			}
		})
	}
}

func TestURL(t *testing.T) {
	if got := URL("", "demo", "example", FileBrowser); got != "http://example-explorer-file-browser.demo.svc.cluster.local/explorer/demo/example/file-browser/" {
		t.Errorf("file browser %s", got)
	}
	if got := URL("", "demo", "example", CodeServer); got != "http://example-explorer-code-server.demo.svc.cluster.local/" {
		t.Errorf("code-server %s", got)
	}
}
