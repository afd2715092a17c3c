package notebook

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/activity"
)

func TestValidateSpec(t *testing.T) {
	for _, tc := range []struct {
		name string
		nb   *tensorstackv1beta1.Notebook
		// want are the fields at fault.
		want []string
	}{
		{name: "the seed's notebook", nb: makeNotebook("demo", "tutorial").obj()},
		{name: "ssh and queue", nb: makeNotebook("demo", "tutorial").ssh(corev1.ServiceTypeClusterIP, "example-user").queue("default").obj()},
		{
			// The platform's 2023 manual names the container after the
			// framework: the first container runs the server.
			name: "no container named notebook",
			nb:   makeNotebook("demo", "nb").podSpec(func(s *corev1.PodSpec) { s.Containers[0].Name = "tensorflow" }).runMode("running").obj(),
		},
		{
			name: "no containers",
			nb:   makeNotebook("demo", "nb").podSpec(func(s *corev1.PodSpec) { s.Containers = nil }).obj(),
			want: []string{"spec.template.spec.containers"},
		},
		{
			name: "the sidecar's names and ports",
			nb: makeNotebook("demo", "nb").podSpec(func(s *corev1.PodSpec) {
				s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8888}, {ContainerPort: 8080}}
				s.Containers = append(s.Containers, corev1.Container{Name: "activity", Ports: []corev1.ContainerPort{{ContainerPort: 2222}}})
				s.InitContainers = []corev1.Container{{Name: "activity"}}
				s.Volumes = append(s.Volumes, corev1.Volume{Name: sshKeysVolume}, corev1.Volume{Name: activity.AccessVolumeName})
			}).obj(),
			want: []string{
				"spec.template.spec.containers[0].ports[1].containerPort",
				"spec.template.spec.containers[1].name",
				"spec.template.spec.containers[1].ports[0].containerPort",
				"spec.template.spec.initContainers[0].name",
				"spec.template.spec.volumes[1].name",
				"spec.template.spec.volumes[2].name",
			},
		},
		{
			name: "authorized key names",
			nb:   makeNotebook("demo", "nb").ssh("", "ok", "Not_A_Name", "ok", "").obj(),
			want: []string{"spec.ssh.authorized_keys[1]", "spec.ssh.authorized_keys[2]", "spec.ssh.authorized_keys[3]"},
		},
		{
			name: "queue",
			nb:   makeNotebook("demo", "nb").queue("not a label value").obj(),
			want: []string{"spec.scheduler.t9kScheduler.queue"},
		},
		{
			name: "empty queue",
			nb:   makeNotebook("demo", "nb").queue("").obj(),
			want: []string{"spec.scheduler.t9kScheduler.queue"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range ValidateSpec(tc.nb) {
				if len(got) == 0 || got[len(got)-1] != e.Field {
					got = append(got, e.Field)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fields at fault (-want +got):\n%s\nerrors: %v", diff, ValidateSpec(tc.nb))
			}
		})
	}
}

func TestWebhook(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := tensorstackv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	w := &webhook{decoder: admission.NewDecoder(scheme)}
	raw := func(nb *tensorstackv1beta1.Notebook) runtime.RawExtension {
		nb.APIVersion, nb.Kind = tensorstackv1beta1.GroupVersion.String(), "Notebook"
		b, err := json.Marshal(nb)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: b}
	}
	good := makeNotebook("demo", "nb").obj()
	noContainers := func(s *corev1.PodSpec) { s.Containers = nil }
	bad := makeNotebook("demo", "nb").podSpec(noContainers).obj()
	badSuspended := makeNotebook("demo", "nb").podSpec(noContainers).suspend().obj()
	badKeys := makeNotebook("demo", "nb").podSpec(noContainers).ssh("", "Bad_Key").obj()

	for _, tc := range []struct {
		name     string
		op       admissionv1.Operation
		obj, old *tensorstackv1beta1.Notebook
		wantOK   bool
		wantMsg  string
	}{
		{name: "create valid", op: admissionv1.Create, obj: good, wantOK: true},
		{name: "create without containers", op: admissionv1.Create, obj: bad, wantMsg: "spec.template.spec.containers"},
		{name: "update to invalid", op: admissionv1.Update, obj: bad, old: good, wantMsg: "spec.template.spec.containers"},
		{name: "suspending an old invalid Notebook", op: admissionv1.Update, obj: badSuspended, old: bad, wantOK: true},
		{name: "a new fault on an old invalid Notebook", op: admissionv1.Update, obj: badKeys, old: bad, wantMsg: "spec.ssh.authorized_keys[0]"},
		{name: "delete", op: admissionv1.Delete, wantOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: tc.op}}
			if tc.obj != nil {
				req.Object = raw(tc.obj.DeepCopy())
			}
			if tc.old != nil {
				req.OldObject = raw(tc.old.DeepCopy())
			}
			resp := w.Handle(context.Background(), req)
			if resp.Allowed != tc.wantOK {
				t.Fatalf("allowed = %v, want %v: %+v", resp.Allowed, tc.wantOK, resp.Result)
			}
			if !tc.wantOK {
				if msg := resp.Result.Message; !strings.Contains(msg, tc.wantMsg) || !strings.Contains(msg, `Notebook.tensorstack.dev "nb" is invalid`) {
					t.Errorf("message %q, want it to name %s", msg, tc.wantMsg)
				}
				if strings.Contains(tc.name, "new fault") && strings.Contains(resp.Result.Message, "containers") {
					t.Errorf("message %q repeats the fault the Notebook had", resp.Result.Message)
				}
			}
		})
	}
}
