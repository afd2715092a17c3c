package workloadmetrics

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	batchv1beta1 "github.com/accelstack/accelstack/api/batch/v1beta1"
	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
	"github.com/accelstack/accelstack/pkg/jobs/kinds"
)

func kind(name string) Kind {
	for _, k := range Kinds(kinds.Registered()) {
		if k.GVK.Kind == name {
			return k
		}
	}
	panic(name)
}

func TestState(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind string
		obj  map[string]any
		want string
	}{
		{
			name: "failed job",
			kind: "PyTorchTrainingJob",
			obj:  map[string]any{"metadata": map[string]any{"namespace": "ns", "name": "j"}, "status": map[string]any{"phase": "Failed"}},
			want: `phase{PyTorchTrainingJob,ns,j,Failed}=1 paused{PyTorchTrainingJob,ns,j}=0`,
		},
		{
			name: "paused job without phase",
			kind: "GenericJob",
			obj: map[string]any{"metadata": map[string]any{"namespace": "ns", "name": "g"},
				"spec": map[string]any{"runMode": map[string]any{"pause": map[string]any{"enabled": true}}}},
			want: `phase{GenericJob,ns,g,Unknown}=1 paused{GenericJob,ns,g}=1`,
		},
		{
			name: "notebook not ready, suspended",
			kind: "Notebook",
			obj: map[string]any{"metadata": map[string]any{"namespace": "ns", "name": "nb"}, "spec": map[string]any{"suspend": true},
				"status": map[string]any{"phase": "Suspended", "conditions": []any{
					map[string]any{"type": "Ready", "status": "False", "lastTransitionTime": "2024-05-10T02:51:41Z"},
				}}},
			want: `phase{Notebook,ns,nb,Suspended}=1 paused{Notebook,ns,nb}=1 ready{Notebook,ns,nb}=0 since{Notebook,ns,nb}=1715309501`,
		},
		{
			name: "tensorboard running without Ready condition",
			kind: "TensorBoard",
			obj:  map[string]any{"metadata": map[string]any{"namespace": "ns", "name": "tb"}, "status": map[string]any{"phase": "Running"}},
			want: `phase{TensorBoard,ns,tb,Running}=1 paused{TensorBoard,ns,tb}=0 ready{TensorBoard,ns,tb}=1`,
		},
		{
			name: "mlservice paused by condition",
			kind: "MLService",
			obj: map[string]any{"metadata": map[string]any{"namespace": "ns", "name": "m"}, "status": map[string]any{"conditions": []any{
				map[string]any{"type": "Paused", "status": "True"},
				map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-10T02:51:41Z"},
			}}},
			want: `phase{MLService,ns,m,Unknown}=1 paused{MLService,ns,m}=1 ready{MLService,ns,m}=1 since{MLService,ns,m}=1715309501`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range state(kind(tc.kind), tc.obj) {
				got = append(got, render(t, m))
			}
			if diff := cmp.Diff(tc.want, strings.Join(got, " ")); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
		})
	}
}

// render writes m as short-name{label values}=value.
func render(t *testing.T, m prometheus.Metric) string {
	t.Helper()
	desc := m.Desc().String()
	short := map[string]string{PhaseMetric: "phase", ReadyMetric: "ready", ReadySinceMetric: "since", PausedMetric: "paused"}
	var name string
	for full, s := range short {
		if strings.Contains(desc, `"`+full+`"`) {
			name = s
		}
	}
	var values []string
	d := &dtoMetric{}
	if err := m.Write(&d.Metric); err != nil {
		t.Fatal(err)
	}
	for _, l := range d.Metric.GetLabel() {
		values = append(values, l.GetValue())
	}
	// Label pairs come sorted by name: kind, name, namespace[, phase].
	ordered := []string{values[0], values[2], values[1]}
	if len(values) > 3 {
		ordered = append(ordered, values[3])
	}
	return name + "{" + strings.Join(ordered, ",") + "}=" + trimFloat(d.Metric.GetGauge().GetValue())
}

// TestCollectorLists: the collector reads typed lists through the reader
// and passes promtool-style lint through the registry.
func TestCollectorLists(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := batchv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := tensorstackv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	job := &batchv1beta1.GenericJob{}
	job.Namespace, job.Name = "ns", "j"
	job.Status.Phase = batchv1beta1.JobFailed
	nb := &tensorstackv1beta1.Notebook{}
	nb.Namespace, nb.Name = "ns", "nb"
	nb.Status.Phase = tensorstackv1beta1.NotebookRunning
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(job, nb).Build()
	covered := []Kind{kind("GenericJob"), kind("Notebook")}
	col := NewCollector(c, scheme, covered, logr.Discard())
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(col); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gathering (pedantic): %v", err)
	}
	var got []string
	for _, f := range families {
		if f.GetName() != PhaseMetric {
			continue
		}
		for _, m := range f.GetMetric() {
			var lv []string
			for _, l := range m.GetLabel() {
				lv = append(lv, l.GetName()+"="+l.GetValue())
			}
			got = append(got, strings.Join(lv, ",")+" "+trimFloat(m.GetGauge().GetValue()))
		}
	}
	want := []string{
		"kind=GenericJob,name=j,namespace=ns,phase=Failed 1",
		"kind=Notebook,name=nb,namespace=ns,phase=Running 1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", PhaseMetric, diff)
	}
}
