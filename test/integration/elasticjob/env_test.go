package elasticjob

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	elasticv1alpha1 "github.com/accelstack/accelstack/api/elastic/v1alpha1"
	"github.com/accelstack/accelstack/test/harness"
	"github.com/accelstack/accelstack/test/testutil"
)

// env is the control plane the subtests share.
type env struct {
	c client.Client
}

// startEnv starts the control plane, the ElasticJob webhook configuration
// of deploy/controllers pointed at the in-process controllers, and the
// controllers.
func startEnv(t *testing.T) *env {
	t.Helper()
	cp := harness.StartControlPlane(t)
	cp.InstallWebhook(t, "controllers/elasticjob-webhook.yaml", nil)
	cp.StartControllers(t)
	return &env{c: cp.Client}
}

// namespace creates a namespace for one subtest.
func (e *env) namespace(t *testing.T) string {
	t.Helper()
	return testutil.Namespace(t, e.c, "elastic", nil)
}

// pods returns the job's pods by name.
func (e *env) pods(ctx context.Context, t *testing.T, ns, job string) map[string]*corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := e.c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{elasticv1alpha1.JobNameLabelKey: job}); err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// waitPods waits until exactly the named pods of the job exist and returns
// them.
func (e *env) waitPods(ctx context.Context, t *testing.T, ns, job string, names ...string) map[string]*corev1.Pod {
	t.Helper()
	sort.Strings(names)
	var got map[string]*corev1.Pod
	testutil.Poll(ctx, t, "pods "+strings.Join(names, ","), func() (bool, string, error) {
		got = e.pods(ctx, t, ns, job)
		have := make([]string, 0, len(got))
		for n := range got {
			have = append(have, n)
		}
		sort.Strings(have)
		return strings.Join(have, ",") == strings.Join(names, ","), fmt.Sprintf("have %v", have), nil
	})
	return got
}

// setPod writes pod status as a kubelet would: the phase, a reason, and a
// pod IP for running pods.
func (e *env) setPod(ctx context.Context, t *testing.T, ns, name string, phase corev1.PodPhase, reason string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &corev1.Pod{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return err
		}
		p.Status.Phase, p.Status.Reason = phase, reason
		if phase == corev1.PodRunning {
			p.Status.PodIP, p.Status.PodIPs = "10.0.0.9", []corev1.PodIP{{IP: "10.0.0.9"}}
		}
		return e.c.Status().Update(ctx, p)
	})
	if err != nil {
		t.Fatalf("setting pod %s %s: %v", name, phase, err)
	}
}

// job gets a job.
func (e *env) job(ctx context.Context, t *testing.T, ns, name string) *elasticv1alpha1.ElasticJob {
	t.Helper()
	j := &elasticv1alpha1.ElasticJob{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		t.Fatal(err)
	}
	return j
}

// waitPhase waits until the job reaches phase and returns it.
func (e *env) waitPhase(ctx context.Context, t *testing.T, ns, name string, phase elasticv1alpha1.JobConditionType) *elasticv1alpha1.ElasticJob {
	t.Helper()
	var j *elasticv1alpha1.ElasticJob
	testutil.Poll(ctx, t, fmt.Sprintf("%s phase %s", name, phase), func() (bool, string, error) {
		j = e.job(ctx, t, ns, name)
		return j.Status.Phase == phase, fmt.Sprintf("phase %q conditions %+v", j.Status.Phase, j.Status.Conditions), nil
	})
	return j
}

// waitPlan waits until the ScalePlan reaches phase and returns it.
func (e *env) waitPlan(ctx context.Context, t *testing.T, ns, name string, phase elasticv1alpha1.JobConditionType) *elasticv1alpha1.ScalePlan {
	t.Helper()
	p := &elasticv1alpha1.ScalePlan{}
	testutil.Poll(ctx, t, fmt.Sprintf("ScalePlan %s phase %s", name, phase), func() (bool, string, error) {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			return false, "", err
		}
		return p.Status.Phase == phase, fmt.Sprintf("phase %q", p.Status.Phase), nil
	})
	return p
}

// container is a plain container.
func container(image string) corev1.Container {
	return corev1.Container{Name: "main", Image: image, Command: []string{"python", "train.py"}}
}

// replica is a replica spec of n pods of one container.
func replica(n int32, restartCount int) *elasticv1alpha1.ReplicaSpec {
	s := &elasticv1alpha1.ReplicaSpec{RestartCount: restartCount}
	s.Replicas = n
	s.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	s.Template.Spec.Containers = []corev1.Container{container("trainer:v1")}
	return s
}

// newJob is a job of the strategy with the replica specs.
func newJob(ns, name, strategy string, specs map[elasticv1alpha1.ReplicaType]*elasticv1alpha1.ReplicaSpec) *elasticv1alpha1.ElasticJob {
	return &elasticv1alpha1.ElasticJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       elasticv1alpha1.ElasticJobSpec{DistributionStrategy: strategy, ReplicaSpecs: specs},
	}
}

// newPlan is a ScalePlan of scaleType for job.
func newPlan(ns, name, job, scaleType string, spec elasticv1alpha1.ScaleSpec) *elasticv1alpha1.ScalePlan {
	spec.OwnerJob = job
	return &elasticv1alpha1.ScalePlan{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			elasticv1alpha1.ScaleTypeLabelKey: scaleType, elasticv1alpha1.JobNameLabelKey: job,
		}},
		Spec: spec,
	}
}

// env returns the pod's environment of containers[0] as name=value lines,
// fieldRefs as name=<field>.
func podEnv(p *corev1.Pod) []string {
	var out []string
	for _, e := range p.Spec.Containers[0].Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			v = "<" + e.ValueFrom.FieldRef.FieldPath + ">"
		}
		out = append(out, e.Name+"="+v)
	}
	return out
}

// envValue is the value of the pod's variable name.
func envValue(t *testing.T, p *corev1.Pod, name string) string {
	t.Helper()
	for _, e := range p.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	t.Fatalf("pod %s has no %s in %v", p.Name, name, podEnv(p))
	return ""
}
