package elasticjob

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
	"github.com/accelstack/accelstack/test/testutil"
)

// testRefused: the webhook refuses jobs that cannot run and ScalePlans that
// name a replica type the job does not have, naming the field.
func (e *env) testRefused(t *testing.T) {
	ctx, ns := testutil.SubtestContext(t), e.namespace(t)
	testutil.MustCreate(ctx, t, e.c, newJob(ns, "owner", "", map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec{"worker": replica(1, 0)}))
	type specs = map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec
	noImage := replica(1, 0)
	noImage.Template.Spec.Containers[0].Image = ""
	noContainer := replica(1, 0)
	noContainer.Template.Spec.Containers = nil
	withPolicy := func(f func(*elasticv1alpha1.ReplicaSpec)) *elasticv1alpha1.ReplicaSpec {
		s := replica(1, 0)
		f(s)
		return s
	}
	plan := func(f func(*elasticv1alpha1.ScalePlan)) *elasticv1alpha1.ScalePlan {
		p := newPlan(ns, "bad-plan", "owner", "auto", elasticv1alpha1.ScaleSpec{})
		f(p)
		return p
	}
	for _, tc := range []struct {
		name  string
		obj   client.Object
		field string
	}{
		{"unknown replica type", newJob(ns, "j", "", specs{"launcher": replica(1, 0)}), "spec.replicaSpecs"},
		{"no replica specs", newJob(ns, "j", "", specs{}), "spec.replicaSpecs"},
		{"only a master", newJob(ns, "j", "", specs{"dlrover-master": replica(0, 0)}), "spec.replicaSpecs"},
		{"unknown strategy", newJob(ns, "j", "ring-allreduce", specs{"worker": replica(1, 0)}), "spec.distributionStrategy"},
		{"task without image", newJob(ns, "j", "", specs{"worker": noImage}), "spec.replicaSpecs[worker].template.spec.containers[0].image"},
		{"no container", newJob(ns, "j", "", specs{"ps": noContainer}), "spec.replicaSpecs[ps].template.spec.containers"},
		{"negative restartCount", newJob(ns, "j", "", specs{"worker": replica(1, -1)}), "spec.replicaSpecs[worker].restartCount"},
		{"unknown restartPolicy", newJob(ns, "j", "", specs{"worker": withPolicy(func(s *elasticv1alpha1.ReplicaSpec) { s.RestartPolicy = "Sometimes" })}),
			"spec.replicaSpecs[worker].restartPolicy"},
		{"bad priority", newJob(ns, "j", "", specs{"worker": withPolicy(func(s *elasticv1alpha1.ReplicaSpec) { s.Priority = "1.5" })}),
			"spec.replicaSpecs[worker].priority"},
		{"bad BatchScheduler", newJob(ns, "j", "", specs{"worker": withPolicy(func(s *elasticv1alpha1.ReplicaSpec) { s.BatchScheduler = "kueue" })}),
			"spec.replicaSpecs[worker].BatchScheduler"},
		{"plan with unknown type", plan(func(p *elasticv1alpha1.ScalePlan) {
			p.Spec.ReplicaResourceSpecs = map[elasticv1alpha1.ReplicaType]elasticv1alpha1.ReplicaResourceSpec{"launcher": {Replicas: 1}}
		}), "spec.replicaResourceSpecs[launcher]"},
		{"plan with a type the job lacks", plan(func(p *elasticv1alpha1.ScalePlan) {
			p.Spec.ReplicaResourceSpecs = map[elasticv1alpha1.ReplicaType]elasticv1alpha1.ReplicaResourceSpec{"ps": {Replicas: 1}}
		}), "spec.replicaResourceSpecs[ps]"},
		{"plan creating a pod of unknown type", plan(func(p *elasticv1alpha1.ScalePlan) {
			p.Spec.CreatePods = []elasticv1alpha1.PodMeta{{Name: "x", Type: "launcher"}}
		}), "spec.createPods[0].type"},
		{"plan creating a pod without type", plan(func(p *elasticv1alpha1.ScalePlan) {
			p.Spec.CreatePods = []elasticv1alpha1.PodMeta{{Name: "x"}}
		}), "spec.createPods[0].type"},
		{"plan removing a pod without name", plan(func(p *elasticv1alpha1.ScalePlan) {
			p.Spec.RemovePods = []elasticv1alpha1.PodMeta{{Type: "worker"}}
		}), "spec.removePods[0].name"},
		{"plan without owner", plan(func(p *elasticv1alpha1.ScalePlan) {
			p.Spec.OwnerJob, p.Labels = "", nil
		}), "spec.ownerJob"},
		{"plan whose owner and label differ", plan(func(p *elasticv1alpha1.ScalePlan) {
			p.Spec.OwnerJob = "other"
		}), "spec.ownerJob"},
		{"plan with unknown scale-type", plan(func(p *elasticv1alpha1.ScalePlan) {
			p.Labels["scale-type"] = "sometimes"
		}), "metadata.labels[scale-type]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.c.Create(ctx, tc.obj)
			// The CRD schema refuses some first, naming the field its way.
			if !apierrors.IsInvalid(err) || !strings.Contains(dotted(err.Error()), dotted(tc.field)) {
				t.Errorf("create: %v; want Invalid naming %s", err, tc.field)
			}
		})
	}

	// An update that breaks a job is refused too.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		j := e.job(ctx, t, ns, "owner")
		j.Spec.ReplicaSpecs["worker"].Template.Spec.Containers[0].Image = ""
		return e.c.Update(ctx, j)
	})
	if !apierrors.IsInvalid(err) {
		t.Errorf("update removing the image: %v, want Invalid", err)
	}
	// A chief may be scaled on a job with workers only: it is made like one.
	ok := newPlan(ns, "chief-plan", "owner", "manual", elasticv1alpha1.ScaleSpec{
		ReplicaResourceSpecs: map[elasticv1alpha1.ReplicaType]elasticv1alpha1.ReplicaResourceSpec{"chief": {Replicas: 1}},
	})
	testutil.MustCreate(ctx, t, e.c, ok)
	e.waitPlan(ctx, t, ns, "chief-plan", elasticv1alpha1.JobSucceeded)
	pods := e.waitPods(ctx, t, ns, "owner", "owner-edljob-worker-0", "owner-edljob-chief-0")
	if got := pods["owner-edljob-chief-0"].Spec.Containers[0].Image; got != "trainer:v1" {
		t.Errorf("chief image %q, want the worker's", got)
	}
}

// dotted writes a field path with dots for keys and indexes, as the CRD
// schema's errors do.
func dotted(s string) string {
	return strings.NewReplacer("[", ".", "]", "").Replace(s)
}
